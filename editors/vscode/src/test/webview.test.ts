import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { contentSecurityPolicy, fillTemplate, makeNonce } from '../webviewHtml';

const ROOT = path.resolve(__dirname, '..', '..');
const media = (name: string) => fs.readFileSync(path.join(ROOT, 'media', name), 'utf8');

describe('chat panel HTML', () => {
  const nonce = makeNonce();
  const html = fillTemplate(media('chat.html'), {
    cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
    nonce,
    scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/chat.js',
    styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/chat.css',
  });

  test('every placeholder is filled', () => {
    assert.doesNotMatch(html, /\{\{\w+\}\}/);
    assert.match(html, new RegExp(`<script nonce="${nonce}" src="https://file\\+\\.vscode-resource[^"]*/chat\\.js"></script>`));
  });

  test('a strict CSP: nothing inline but the nonce script, nothing remote', () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    assert.ok(csp);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce}'`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(csp, contentSecurityPolicy('https://file+.vscode-resource.vscode-cdn.net', nonce));
  });

  test('one script, no inline handlers or styles in the template', () => {
    assert.equal(html.match(/<script/g)?.length, 1);
    assert.doesNotMatch(html, /\son[a-z]+=/i);
    assert.doesNotMatch(html, /\sstyle=/i);
    assert.doesNotMatch(html, /<style/i);
  });

  test('the panel script and stylesheet load nothing remote and evaluate no strings', () => {
    const script = media('chat.js');
    const style = media('chat.css');
    for (const text of [media('chat.html'), script, style]) {
      assert.doesNotMatch(text, /https?:\/\//);
      assert.doesNotMatch(text, /@import|url\(/);
    }
    assert.doesNotMatch(script, /\beval\(|new Function|setTimeout\(\s*['"`]/);
    // The only HTML it inserts is what the extension built (patch blocks, footers, the plan).
    const assignments = script.match(/\.innerHTML = [^;]+;/g) ?? [];
    assert.deepEqual(assignments, [
      '.innerHTML = planHtml;',
      '.innerHTML = block.html;',
      '.innerHTML = message.footer;',
    ]);
  });

  test('the composer row wraps instead of clipping Send in a narrow sidebar (issue 47)', () => {
    const style = media('chat.css');
    const rule = (selector: string) => {
      const at = style.indexOf(`\n${selector} {`);
      assert.ok(at >= 0, `no rule for ${selector}`);
      return style.slice(at, style.indexOf('}', at));
    };
    assert.match(rule('.actions'), /flex-wrap: wrap;/);
    // One-line button labels ("Link file" did wrap), the token count shrinks with an ellipsis.
    assert.match(rule('.actions > label'), /white-space: nowrap;/);
    assert.match(rule('.tokens'), /min-width: 0;[\s\S]*text-overflow: ellipsis;/);
    assert.match(rule('#send'), /margin-left: auto;/);
  });

  test('nonces are fresh and URL-safe', () => {
    const a = makeNonce();
    assert.match(a, /^[A-Za-z0-9]{16,}$/);
    assert.notEqual(a, makeNonce());
  });
});

describe('pure modules', () => {
  test('load without vscode (they run here, in plain node)', () => {
    for (const name of ['chatModel', 'chatView', 'markdown', 'protocol', 'settings', 'statusModel', 'refactorModel', 'webviewHtml', 'doctorModel']) {
      const compiled = fs.readFileSync(path.join(ROOT, 'out', `${name}.js`), 'utf8');
      assert.doesNotMatch(compiled, /require\("vscode"\)/, name);
      assert.doesNotMatch(compiled, /require\("vscode-languageclient/, name);
    }
  });
});
