import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  Inspected,
  contributedProperties,
  explicitValue,
  serverKeys,
  serverSettings,
  snakeCase,
  stableJson,
} from '../settings';

const ROOT = path.resolve(__dirname, '..', '..');
const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('contributed settings', () => {
  const properties = contributedProperties(packageJson);
  const keys = serverKeys(properties);

  test('client-only settings are never sent to the server', () => {
    for (const name of ['qodeassist.server.path', 'qodeassist.server.args', 'qodeassist.server.env',
      'qodeassist.inlineCompletion.enabled', 'qodeassist.trace.server']) {
      assert.ok(properties.includes(name), `${name} is contributed`);
      assert.ok(!keys.includes(name), `${name} is client-only`);
    }
  });

  test('server settings mirror settings.toml sections with camelCase keys', () => {
    const sections = new Set(keys.map((k) => k.split('.')[1]));
    assert.deepEqual([...sections].sort(), ['chat', 'completion', 'general', 'logging', 'refactor']);
    for (const key of keys) {
      assert.match(key, /^qodeassist\.[a-z]+\.[a-z][A-Za-z0-9]*$/, key);
    }
    assert.ok(keys.includes('qodeassist.completion.debounceMs'));
    assert.ok(keys.includes('qodeassist.chat.autoCompress'));
    assert.ok(keys.includes('qodeassist.refactor.defaultInstruction'));
  });

  test('no user-only (†) key is mirrored: a workspace could set it', () => {
    const userOnly = ['historyDir', 'allowAccessOutsideProject', 'autoApplyFileEdits',
      'terminalAllowList', 'enableServer', 'serverPort', 'enableClients', 'clientExtraPaths',
      'globalDirs', 'logFile'];
    for (const key of keys) {
      assert.ok(!userOnly.includes(key.split('.')[2]), key);
    }
  });

  test('every setting has a description and a default of its type', () => {
    for (const section of packageJson.contributes.configuration) {
      for (const [name, spec] of Object.entries<Record<string, unknown>>(section.properties)) {
        assert.ok(spec.description || spec.markdownDescription, `${name} has a description`);
        assert.ok('default' in spec, `${name} has a default`);
        const type = spec.type === 'integer' ? 'number' : spec.type === 'array' ? 'object' : spec.type;
        assert.equal(typeof spec.default, type, `${name}: default matches its type`);
      }
    }
  });
});

describe('serverSettings', () => {
  const keys = [
    'qodeassist.completion.debounceMs',
    'qodeassist.completion.multiLine',
    'qodeassist.chat.autoCompress',
    'qodeassist.general.enabled',
  ];
  const values: Record<string, Inspected> = {
    'qodeassist.completion.debounceMs': { globalValue: 300, workspaceValue: 200 },
    'qodeassist.completion.multiLine': { globalValue: 'never' },
    'qodeassist.chat.autoCompress': {}, // only the default: not sent
    'qodeassist.general.enabled': { workspaceFolderValue: false, workspaceValue: true },
  };

  test('only what the user set, folder over workspace over user, nested by section', () => {
    assert.deepEqual(serverSettings(keys, (k) => values[k]), {
      completion: { debounceMs: 200, multiLine: 'never' },
      general: { enabled: false },
    });
  });

  test('an untrusted workspace: user settings only', () => {
    assert.deepEqual(serverSettings(keys, (k) => values[k], false), {
      completion: { debounceMs: 300, multiLine: 'never' },
    });
  });

  test('nothing set: an empty object', () => {
    assert.deepEqual(serverSettings(keys, () => undefined), {});
    assert.equal(explicitValue(undefined), undefined);
    assert.equal(explicitValue({ globalValue: null }), null);
  });

  test('helpers', () => {
    assert.equal(snakeCase('firstByteTimeoutS'), 'first_byte_timeout_s');
    assert.equal(stableJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 2 }] } }), '{"a":{"c":[3,{"e":2,"f":1}],"d":2},"b":1}');
  });
});
