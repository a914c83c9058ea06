/**
 * The server's stderr lines at their own log level in the output channel.
 *
 * The server logs `2026-01-02 03:04:05,678 WARNING qodeassist.server: text` to stderr; the
 * language client would write every stderr line with `error`, so an info line showed as
 * `[error]`. The channel adds its own time stamp, so only `name: text` is kept. A line without a
 * level (a traceback, a warning from Python itself) keeps the level of the line before it.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

export type LineLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface ServerLine {
  level: LineLevel;
  text: string;
}

const LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

const LEVELS: Record<string, LineLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

/** The level and text of one stderr line; `previous` is the level of the line before. */
export function parseServerLine(line: string, previous: LineLevel = 'info'): ServerLine {
  const match = LINE.exec(line);
  if (!match) {
    return { level: previous, text: line };
  }
  return { level: LEVELS[match[1]], text: match[2] };
}

/** Something with the log methods of a `LogOutputChannel`. */
export type LevelWriter = Record<LineLevel, (text: string) => void>;

/** A function that writes each stderr line at its level (keeps the last level seen). */
export function serverLineWriter(channel: LevelWriter): (line: string) => void {
  let previous: LineLevel = 'info';
  return (line: string) => {
    const parsed = parseServerLine(line, previous);
    previous = parsed.level;
    channel[parsed.level](parsed.text);
  };
}
