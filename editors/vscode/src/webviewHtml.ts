/**
 * Fill the chat panel's HTML template (media/chat.html) and build its Content-Security-Policy.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

import { randomBytes } from 'crypto';

export interface PanelResources {
  /** `webview.cspSource`: the origin of the extension's local resources. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
}

export function makeNonce(): string {
  return randomBytes(18).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}

/**
 * Nothing remote, nothing inline but the one nonce'd script: scripts only with the nonce,
 * styles only from the extension's files, images only from the extension or data: URIs.
 */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Escape a value for a double-quoted attribute (single quotes, as in the CSP, stay). */
function escapeAttribute(value: string): string {
  return value.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}

/** Replace `{{csp}}`, `{{nonce}}`, `{{scriptUri}}`, `{{styleUri}}` (attribute-escaped). */
export function fillTemplate(template: string, resources: PanelResources): string {
  const values: Record<string, string> = {
    csp: contentSecurityPolicy(resources.cspSource, resources.nonce),
    nonce: resources.nonce,
    scriptUri: resources.scriptUri,
    styleUri: resources.styleUri,
  };
  return template.replace(/\{\{(\w+)\}\}/g, (match, name: string) =>
    name in values ? escapeAttribute(values[name]) : match,
  );
}
