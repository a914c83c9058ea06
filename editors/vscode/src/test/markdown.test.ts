import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { escapeHtml, inline, renderMarkdown, safeHref } from '../markdown';

describe('renderMarkdown', () => {
  test('paragraphs keep line breaks; blank lines separate them', () => {
    assert.equal(renderMarkdown('one\ntwo\n\nthree'), '<p>one<br>two</p><p>three</p>');
  });

  test('headings, rules and quotes', () => {
    assert.equal(renderMarkdown('## Title ##'), '<h2>Title</h2>');
    assert.equal(renderMarkdown('---'), '<hr>');
    assert.equal(renderMarkdown('> quoted\n> more'), '<blockquote><p>quoted<br>more</p></blockquote>');
  });

  test('fenced code is escaped, labelled and has copy/insert buttons', () => {
    const html = renderMarkdown('Here:\n```python\nif a < b and c > d:\n    print("&")\n```\nDone.');
    assert.match(html, /^<p>Here:<\/p><div class="code-block"><span class="code-lang">python<\/span>/);
    assert.match(html, /data-code-action="copy"/);
    assert.match(html, /data-code-action="insert"/);
    assert.match(
      html,
      /<pre><code class="language-python">if a &lt; b and c &gt; d:\n {4}print\(&quot;&amp;&quot;\)<\/code><\/pre><\/div><p>Done\.<\/p>$/,
    );
  });

  test('an unterminated fence (still streaming) runs to the end', () => {
    const html = renderMarkdown('```js\nconst a = 1;\n**not bold**');
    assert.match(html, /<code class="language-js">const a = 1;\n\*\*not bold\*\*<\/code>/);
  });

  test('a longer closing fence closes; a shorter one does not', () => {
    const html = renderMarkdown('````\n```\ninner\n```\n````\nafter');
    assert.match(html, /<code>```\ninner\n```<\/code>/);
    assert.match(html, /<p>after<\/p>$/);
  });

  test('lists, nested lists and ordered starts', () => {
    assert.equal(renderMarkdown('- a\n- b'), '<ul><li>a</li><li>b</li></ul>');
    assert.equal(
      renderMarkdown('1. one\n2. two\n   - sub\n   - sub2\n3. three'),
      '<ol><li>one</li><li>two<ul><li>sub</li><li>sub2</li></ul></li><li>three</li></ol>',
    );
    assert.equal(renderMarkdown('3) c\n4) d'), '<ol start="3"><li>c</li><li>d</li></ol>');
    assert.equal(
      renderMarkdown('1. a\n\n2. b\n\n* c\n- d'),
      '<ol><li>a</li><li>b</li></ol><ul><li>c</li></ul><ul><li>d</li></ul>',
    );
    assert.equal(
      renderMarkdown('Steps:\n- x\n\nEnd'),
      '<p>Steps:</p><ul><li>x</li></ul><p>End</p>',
    );
  });

  test('a code fence inside a list item', () => {
    const html = renderMarkdown('- run:\n  ```sh\n  make\n  ```\n- done');
    assert.match(html, /^<ul><li>run:<div class="code-block">.*<code class="language-sh">make<\/code>.*<\/li><li>done<\/li><\/ul>$/s);
  });

  test('tables with alignment', () => {
    const html = renderMarkdown('| a | b |\n|:--|--:|\n| `x|y` | **2** |');
    assert.equal(
      html,
      '<table><thead><tr><th class="align-left">a</th><th class="align-right">b</th></tr></thead>' +
        '<tbody><tr><td class="align-left"><code>x|y</code></td><td class="align-right"><strong>2</strong></td></tr></tbody></table>',
    );
  });

  test('raw HTML is shown as text', () => {
    const html = renderMarkdown('<script>alert(1)</script>\n<img src=x onerror=alert(1)>');
    assert.equal(
      html,
      '<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>&lt;img src=x onerror=alert(1)&gt;</p>',
    );
  });

  test('NUL characters cannot smuggle placeholders', () => {
    assert.equal(renderMarkdown('a\u00000\u0000b `c`'), '<p>a0b <code>c</code></p>');
  });
});

describe('inline', () => {
  test('emphasis, strong, strikethrough; none inside code', () => {
    assert.equal(inline('**b** *i* _j_ ~~s~~'), '<strong>b</strong> <em>i</em> <em>j</em> <del>s</del>');
    assert.equal(inline('`a*b*c` and snake_case_name'), '<code>a*b*c</code> and snake_case_name');
    assert.equal(inline('2 * 3 * 4'), '2 * 3 * 4');
    assert.equal(inline('``a ` b``'), '<code>a ` b</code>');
  });

  test('links become data-href anchors; unsafe schemes stay text', () => {
    assert.equal(
      inline('[docs](https://example.com/a_b?x=1&y=2)'),
      '<a data-href="https://example.com/a_b?x=1&amp;y=2" title="https://example.com/a_b?x=1&amp;y=2" href="#">docs</a>',
    );
    assert.equal(inline('[parser](src/parser.py#L10)'), '<a data-href="src/parser.py#L10" title="src/parser.py#L10" href="#">parser</a>');
    assert.equal(inline('[x](javascript:alert(1))'), 'x)');
    assert.equal(inline('[x](vscode://command/foo)'), 'x');
    assert.match(inline('see https://example.com/path.'), /^see <a data-href="https:\/\/example\.com\/path" .*>https:\/\/example\.com\/path<\/a>\.$/);
    assert.equal(
      inline('[`code` label](file:///p/a.py)'),
      '<a data-href="file:///p/a.py" title="file:///p/a.py" href="#"><code>code</code> label</a>',
    );
  });

  test('attribute values cannot be broken out of', () => {
    const html = inline('[x](https://e.com/"onmouseover="alert(1))');
    assert.doesNotMatch(html, /"onmouseover="/);
  });

  test('safeHref and escapeHtml', () => {
    assert.equal(safeHref(' https://a.b '), 'https://a.b');
    assert.equal(safeHref('mailto:me@x.org'), 'mailto:me@x.org');
    assert.equal(safeHref('data:text/html,<b>'), undefined);
    assert.equal(safeHref('JAVASCRIPT:alert(1)'), undefined);
    assert.equal(safeHref(''), undefined);
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
