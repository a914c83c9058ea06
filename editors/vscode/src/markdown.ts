/**
 * A small, safe Markdown → HTML renderer for the chat panel.
 *
 * Safe by construction: every piece of source text is HTML-escaped before it is wrapped in a
 * fixed set of tags, raw HTML in the source is shown as text, and links become
 * `<a data-href="…">` elements the panel's script opens through the extension (only `http:`,
 * `https:`, `mailto:`, `file:` and relative targets; anything else stays text). No `style`
 * attributes, no images: the panel's Content-Security-Policy allows no inline styles and no
 * remote resources.
 *
 * It covers what models write: paragraphs (line breaks kept), ATX headings, fenced code (an
 * unterminated fence while streaming runs to the end), indented-free lists with nesting,
 * block quotes, tables, rules, inline code, bold, italic, strikethrough, links and bare URLs.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])(\s+)(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

export function renderMarkdown(source: string): string {
  const lines = source.replace(/\0/g, '').replace(/\r\n?/g, '\n').split('\n');
  return renderBlocks(lines, 0);
}

function renderBlocks(lines: string[], depth: number): string {
  if (depth > 12) {
    return `<p>${inline(lines.join('\n'))}</p>`;
  }
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent, marker, lang] = fence;
      const body: string[] = [];
      i++;
      while (i < lines.length && !isClosingFence(lines[i], marker)) {
        body.push(stripIndent(lines[i], indent.length));
        i++;
      }
      i++; // the closing fence (or past the end: an open fence while streaming)
      out.push(codeBlock(body.join('\n'), lang));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      out.push(`<h${level}>${inline(heading[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && lines[i].trim() !== '') {
        const quoted = QUOTE.exec(lines[i]);
        body.push(quoted ? quoted[1] : lines[i]);
        i++;
      }
      out.push(`<blockquote>${renderBlocks(body, depth + 1)}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const end = listEnd(lines, i);
      out.push(renderList(lines.slice(i, end), depth));
      i = end;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIMITER.test(lines[i + 1])) {
      const rows: string[] = [line, lines[i + 1]];
      i += 2;
      while (i < lines.length && lines[i].includes('|') && lines[i].trim() !== '') {
        rows.push(lines[i]);
        i++;
      }
      out.push(renderTable(rows));
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length && lines[i].trim() !== '' && !startsBlock(lines, i)) {
      paragraph.push(lines[i].trim());
      i++;
    }
    if (paragraph.length === 0) {
      // startsBlock() saw a block the branches above did not take (cannot happen, but never
      // loop forever on a line).
      paragraph.push(lines[i].trim());
      i++;
    }
    out.push(`<p>${paragraph.map(inline).join('<br>')}</p>`);
  }
  return out.join('');
}

function startsBlock(lines: string[], i: number): boolean {
  const line = lines[i];
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line) ||
    (line.includes('|') && i + 1 < lines.length && TABLE_DELIMITER.test(lines[i + 1]))
  );
}

function isClosingFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return (
    trimmed.length >= marker.length &&
    trimmed[0] === marker[0] &&
    new RegExp(`^\\${marker[0]}{${marker.length},}$`).test(trimmed)
  );
}

function stripIndent(line: string, count: number): string {
  let n = 0;
  while (n < count && line[n] === ' ') {
    n++;
  }
  return line.slice(n);
}

function codeBlock(code: string, lang: string): string {
  const language = lang.replace(/[^\w+#.-]/g, '');
  const cls = language ? ` class="language-${escapeHtml(language)}"` : '';
  const label = language ? `<span class="code-lang">${escapeHtml(language)}</span>` : '';
  return (
    `<div class="code-block">${label}` +
    '<div class="code-actions">' +
    '<button class="code-action" data-code-action="copy" title="Copy">Copy</button>' +
    '<button class="code-action" data-code-action="insert" title="Insert at the cursor">Insert</button>' +
    '</div>' +
    `<pre><code${cls}>${escapeHtml(code)}</code></pre></div>`
  );
}

/** `-`, `*`, `+`, or `.`/`)` for ordered items: another marker starts another list. */
function markerKind(marker: string): string {
  return /\d/.test(marker) ? marker[marker.length - 1] : marker;
}

/** Where the list starting at `start` ends: items, their indented continuation, blank gaps. */
function listEnd(lines: string[], start: number): number {
  const first = LIST_ITEM.exec(lines[start]);
  const baseIndent = indentOf(lines[start]);
  const kind = first ? markerKind(first[2]) : '';
  /** An item of this list (not of a nested one, not of a different list). */
  const sibling = (line: string): boolean | undefined => {
    const item = LIST_ITEM.exec(line);
    if (item === null || item[1].length > baseIndent) {
      return undefined;
    }
    return markerKind(item[2]) === kind;
  };
  let i = start + 1;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      // A blank line continues the list only if an item or an indented line follows.
      let j = i + 1;
      while (j < lines.length && lines[j].trim() === '') {
        j++;
      }
      if (j < lines.length && (indentOf(lines[j]) > baseIndent || sibling(lines[j]) === true)) {
        i = j;
        continue;
      }
      return i;
    }
    const item = sibling(line);
    if (item === false) {
      return i;
    }
    if (item === true || indentOf(line) > baseIndent) {
      i++;
      continue;
    }
    if (FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) {
      return i;
    }
    i++; // a lazy continuation line of the last item
  }
  return i;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function renderList(lines: string[], depth: number): string {
  const first = LIST_ITEM.exec(lines[0]);
  if (!first) {
    return '';
  }
  const ordered = /\d/.test(first[2]);
  const baseIndent = first[1].length;
  const items: string[][] = [];
  let contentIndent = 0;
  for (const line of lines) {
    const item = LIST_ITEM.exec(line);
    if (item && item[1].length <= baseIndent) {
      contentIndent = item[1].length + item[2].length + item[3].length;
      items.push([item[4]]);
    } else if (items.length > 0) {
      items[items.length - 1].push(
        indentOf(line) >= contentIndent ? line.slice(contentIndent) : line.trimStart(),
      );
    }
  }
  const start = ordered ? parseInt(first[2], 10) : 1;
  const open = ordered ? (start !== 1 ? `<ol start="${start}">` : '<ol>') : '<ul>';
  const body = items
    .map((lines) => {
      const item = [...lines];
      while (item.length > 1 && item[item.length - 1].trim() === '') {
        item.pop();
      }
      const loose = item.some((l) => l.trim() === '');
      const rest = item.slice(1);
      if (!loose && !rest.some((_l, k) => startsBlock(rest, k))) {
        return `<li>${item.map((l) => inline(l.trim())).join('<br>')}</li>`;
      }
      const html = renderBlocks(item, depth + 1);
      // In a tight item the first paragraph needs no <p> (and no paragraph margin).
      const unwrapped = !loose && html.startsWith('<p>');
      return `<li>${unwrapped ? html.slice(3).replace('</p>', '') : html}</li>`;
    })
    .join('');
  return `${open}${body}${ordered ? '</ol>' : '</ul>'}`;
}

function splitRow(row: string): string[] {
  let text = row.trim();
  if (text.startsWith('|')) {
    text = text.slice(1);
  }
  if (text.endsWith('|') && !text.endsWith('\\|')) {
    text = text.slice(0, -1);
  }
  const cells: string[] = [];
  let current = '';
  let inCode = false;
  for (let k = 0; k < text.length; k++) {
    const c = text[k];
    if (c === '\\' && text[k + 1] === '|') {
      current += '|';
      k++;
    } else if (c === '`') {
      inCode = !inCode;
      current += c;
    } else if (c === '|' && !inCode) {
      cells.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  cells.push(current.trim());
  return cells;
}

function renderTable(rows: string[]): string {
  const header = splitRow(rows[0]);
  const aligns = splitRow(rows[1]).map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : '';
  });
  const cell = (tag: string, text: string, k: number): string => {
    const align = aligns[k] ? ` class="align-${aligns[k]}"` : '';
    return `<${tag}${align}>${inline(text)}</${tag}>`;
  };
  const head = `<thead><tr>${header.map((h, k) => cell('th', h, k)).join('')}</tr></thead>`;
  const body = rows
    .slice(2)
    .map((row) => {
      const cells = splitRow(row);
      return `<tr>${header.map((_, k) => cell('td', cells[k] ?? '', k)).join('')}</tr>`;
    })
    .join('');
  return `<table>${head}${body ? `<tbody>${body}</tbody>` : ''}</table>`;
}

const SAFE_LINK = /^(https?:|mailto:|file:|#|[^:]*$)/i;

/** The href the panel may open, or undefined for a link that must stay text. */
export function safeHref(url: string): string | undefined {
  const target = url.trim();
  if (!target || !SAFE_LINK.test(target) || /[\s<>"'`]/.test(target)) {
    return undefined;
  }
  return target;
}

function link(text: string, url: string): string {
  const href = safeHref(url);
  if (href === undefined) {
    return escapeHtml(text);
  }
  return `<a data-href="${escapeHtml(href)}" title="${escapeHtml(href)}" href="#">${text}</a>`;
}

/**
 * Inline Markdown of one line (or paragraph). Code spans and links are cut out first and put
 * back at the end (as `\0<n>\0` placeholders), so emphasis never applies inside them.
 */
export function inline(text: string): string {
  const held: string[] = [];
  const hold = (html: string): string => `\0${held.push(html) - 1}\0`;
  let s = text.replace(/\0/g, '');
  // Code spans: `code` or ``code with ` inside``.
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks, code: string) =>
    hold(`<code>${escapeHtml(code.replace(/^ (.*) $/, '$1'))}</code>`),
  );
  // Links and images ([text](url "title")); an image is shown as a link to its source.
  s = s.replace(
    /(!?)\[([^\]\n]*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/g,
    (_m, bang: string, label: string, url: string) =>
      hold(link(bang ? escapeHtml(label || url) : emphasis(escapeHtml(label)), url)),
  );
  // Bare URLs.
  s = s.replace(/\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/g, (url) =>
    hold(link(escapeHtml(url), url)),
  );
  s = emphasis(escapeHtml(s));
  // A held link label may itself hold a code span: restore until nothing is left.
  const restore = (html: string, depth: number): string =>
    html.replace(/\0(\d+)\0/g, (_m, n: string) =>
      depth > 3 ? '' : restore(held[Number(n)] ?? '', depth + 1),
    );
  return restore(s, 0);
}

function emphasis(s: string): string {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>')
    .replace(/(^|[^*\w])\*(?=[^\s*])([\s\S]*?[^\s*])\*(?![*\w])/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>');
}
