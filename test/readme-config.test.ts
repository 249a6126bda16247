/**
 * The README's configuration table and the config schema (`EnvSchema` in src/config/config.ts) name the same
 * variables with the same defaults: a variable added to the schema without a row, or a default changed in
 * one place only, fails here with the row to write.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { EnvSchema } from '../src/config/config.ts';

const README = new URL('../README.md', import.meta.url);

/** The rows of the table under "## Configuration": variable names (a row may name several) and default. */
async function configurationRows(): Promise<{ names: string[]; fallback: string }[]> {
  const text = await readFile(README, 'utf8');
  const section = text.slice(
    text.indexOf('## Configuration'),
    text.indexOf('\n## ', text.indexOf('## Configuration') + 1),
  );
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [names = '', fallback = ''] = line
        .slice(1)
        .split('|')
        .map((cell) => cell.trim());
      return { names: [...names.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1] as string), fallback };
    });
}

function schemaDefault(name: string): unknown {
  return (EnvSchema.properties as Record<string, { default?: unknown }>)[name]?.default;
}

describe('README configuration table', () => {
  it('has a row for every variable of the config schema, and none for a variable it lacks', async () => {
    const rows = await configurationRows();
    const inReadme = new Set(rows.flatMap((r) => r.names));
    const inSchema = Object.keys(EnvSchema.properties);
    const missing = inSchema.filter((name) => !inReadme.has(name));
    assert.deepEqual(
      missing,
      [],
      `README.md's Configuration table lacks ${missing.join(', ')}. Add a row for each, e.g.\n` +
        missing
          .map((name) => {
            const d = schemaDefault(name);
            return `  | \`${name}\` | ${d === undefined ? '—' : `\`${d}\``} | what it does (as its doc comment in src/config/config.ts says) |`;
          })
          .join('\n'),
    );
    const unknown = [...inReadme].filter((name) => !inSchema.includes(name));
    assert.deepEqual(
      unknown,
      [],
      `README.md documents ${unknown.join(', ')}, which src/config/config.ts does not read: remove the row or add the variable to EnvSchema`,
    );
  });

  it('gives each variable the default the schema has', async () => {
    for (const row of await configurationRows()) {
      if (row.names.length !== 1) continue; // a row of several variables describes them together
      const name = row.names[0] as string;
      const d = schemaDefault(name);
      if (d === undefined) {
        assert.ok(
          !/^`[^`$]*`$/.test(row.fallback),
          `${name} has no default in EnvSchema, but README says ${row.fallback}`,
        );
        continue;
      }
      assert.equal(
        row.fallback,
        `\`${d}\``,
        `${name}: EnvSchema's default is ${JSON.stringify(d)}; change the README row's default column to \`${d}\``,
      );
    }
  });
});
