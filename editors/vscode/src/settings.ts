/**
 * Which VS Code settings go to the server, and in which shape.
 *
 * Every `qodeassist.*` setting this extension contributes is either the extension's own
 * (`qodeassist.server.*`, `qodeassist.inlineCompletion.*`, `qodeassist.trace.*`) or mirrors a
 * key of the server's `settings.toml` (`qodeassist.completion.debounceMs` is `[completion]
 * debounce_ms`). Only settings the user actually set (in user, workspace or folder settings)
 * are sent: the defaults shown in the Settings editor are the server's own, and sending them
 * would override the user's `settings.toml`, which ranks below the editor's settings.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

export const SECTION = 'qodeassist';

/** Sub-sections that configure this extension, never sent to the server. */
export const CLIENT_ONLY = new Set(['server', 'inlineCompletion', 'trace']);

/** What `WorkspaceConfiguration.inspect()` answers (the parts used here). */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The contributed `qodeassist.*` setting names that mirror server settings. */
export function serverKeys(contributedProperties: Iterable<string>): string[] {
  const keys: string[] = [];
  for (const name of contributedProperties) {
    const parts = name.split('.');
    if (parts.length < 3 || parts[0] !== SECTION || CLIENT_ONLY.has(parts[1])) {
      continue;
    }
    keys.push(name);
  }
  return keys.sort();
}

/** Every `contributes.configuration` property name of a package.json. */
export function contributedProperties(packageJson: unknown): string[] {
  const contributes = (packageJson as { contributes?: { configuration?: unknown } })?.contributes;
  const configuration = contributes?.configuration;
  const sections = Array.isArray(configuration) ? configuration : configuration ? [configuration] : [];
  const names: string[] = [];
  for (const section of sections) {
    const properties = (section as { properties?: Record<string, unknown> })?.properties;
    if (properties) {
      names.push(...Object.keys(properties));
    }
  }
  return names;
}

/**
 * The explicit value of a setting: folder over workspace over user, `undefined` when unset.
 * In an untrusted workspace only user settings count.
 */
export function explicitValue(inspected: Inspected | undefined, trusted = true): unknown {
  if (!inspected) {
    return undefined;
  }
  if (trusted) {
    if (inspected.workspaceFolderValue !== undefined) {
      return inspected.workspaceFolderValue;
    }
    if (inspected.workspaceValue !== undefined) {
      return inspected.workspaceValue;
    }
  }
  return inspected.globalValue;
}

/**
 * The `qodeassist` object the server gets (`initializationOptions.qodeassist`, the
 * `workspace/configuration` answer, `didChangeConfiguration.settings.qodeassist`):
 * `{completion: {debounceMs: 300}, …}` with only the settings the user set.
 */
export function serverSettings(
  keys: Iterable<string>,
  inspect: (key: string) => Inspected | undefined,
  trusted = true,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of keys) {
    const value = explicitValue(inspect(key), trusted);
    if (value === undefined || value === null) {
      continue;
    }
    const path = key.split('.').slice(1); // without "qodeassist"
    let node = result;
    for (const part of path.slice(0, -1)) {
      const child = node[part];
      if (child === undefined || typeof child !== 'object' || child === null) {
        node[part] = {};
      }
      node = node[part] as Record<string, unknown>;
    }
    node[path[path.length - 1]] = value;
  }
  return result;
}

/** `debounceMs` → `debounce_ms` (the name in settings.toml and the docs). */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A stable JSON form, to tell whether the server already has these settings. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
