/**
 * Where the server's stderr and the LSP trace go in the QodeAssist output channel.
 *
 * - stderr: each line at its own level (`serverLog.ts`), not all at `error`.
 * - `qodeassist.trace.server`: vscode-languageclient traces only while its trace channel's log
 *   level is `Trace` and writes with `trace()`, which a channel at the default `Info` level
 *   hides. The trace channel given to the client is the same channel seen through a proxy whose
 *   level follows the setting and whose `trace()` writes at `info`, so the setting alone shows
 *   the messages.
 */

import { Readable } from 'stream';
import * as readline from 'readline';
import * as vscode from 'vscode';
import { serverLineWriter } from './serverLog';

/** The client's `stdioOptions`: stdout (unused by a stdio server) at info, stderr by level. */
export function serverStdio(): {
  stdout: (input: Readable, channel: vscode.LogOutputChannel) => void;
  stderr: (input: Readable, channel: vscode.LogOutputChannel) => void;
} {
  const lines = (input: Readable, write: (line: string) => void) =>
    readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', write);
  return {
    stdout: (input, channel) => lines(input, (line) => channel.info(line)),
    stderr: (input, channel) => lines(input, serverLineWriter(channel)),
  };
}

export class TraceChannel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.LogLevel>();
  private readonly listener: vscode.Disposable;
  /** Give this to the client as `traceOutputChannel`. */
  readonly channel: vscode.LogOutputChannel;

  constructor(output: vscode.LogOutputChannel, section: string) {
    const level = () =>
      vscode.workspace.getConfiguration(section).get<string>('trace.server', 'off') === 'off'
        ? vscode.LogLevel.Info
        : vscode.LogLevel.Trace;
    this.channel = new Proxy(output, {
      get: (target, property) => {
        if (property === 'logLevel') {
          return level();
        }
        if (property === 'onDidChangeLogLevel') {
          return this.changed.event;
        }
        if (property === 'trace') {
          return (message: string) => target.info(message);
        }
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    this.listener = vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${section}.trace.server`)) {
        this.changed.fire(level());
      }
    });
  }

  dispose(): void {
    this.listener.dispose();
    this.changed.dispose();
  }
}
