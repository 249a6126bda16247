/** The call's tags; with a key that has `calls`, a form adds or changes one through call/add_tags. */
import { useState } from 'preact/hooks';
import { addTags, type CallDetail, canTag, type Tag } from '../api.ts';
import { tagText } from '../format.ts';

/** Parses the form's value for its type; null when it does not fit. */
function typed(type: Tag['type'], raw: string): Tag['value'] | null {
  if (type === 'string') return raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : null;
  return /^-?\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

/** Tags, read-only or editable. */
export function Tags(props: { call: CallDetail; onChanged: () => void }) {
  const editable = canTag();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A click on a tag puts it in the form, to change its value (call/add_tags replaces a key's value).
  const [draft, setDraft] = useState({ key: '', type: 'string', value: '' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const key = String(data.get('key') ?? '').trim();
    const type = String(data.get('type') ?? 'string') as Tag['type'];
    const value = typed(type, String(data.get('value') ?? '').trim());
    if (!key) return setError('A tag needs a key.');
    if (value === null)
      return setError(`That value is not ${type === 'integer' ? 'an integer' : 'true or false'}.`);
    setBusy(true);
    setError(null);
    try {
      await addTags(props.call, [{ key, type, value }]);
      setDraft({ key: '', type: 'string', value: '' });
      props.onChanged();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {props.call.tags.length === 0 ? (
        <p class="muted">No tags.</p>
      ) : (
        <ul class="tags">
          {props.call.tags.map((t) => (
            <li class="tag" title={t.type}>
              {editable ? (
                <button
                  type="button"
                  class="tag-edit"
                  aria-label={`Change ${tagText(t)}`}
                  onClick={() => setDraft({ key: t.key, type: t.type, value: String(t.value) })}
                >
                  {tagText(t)}
                </button>
              ) : (
                tagText(t)
              )}
            </li>
          ))}
        </ul>
      )}
      {editable ? (
        <form class="add-tag" onSubmit={submit} aria-label="Add or change a tag">
          <label>
            Key
            <input
              name="key"
              required
              maxLength={128}
              value={draft.key}
              onInput={(e) => setDraft({ ...draft, key: (e.currentTarget as HTMLInputElement).value })}
            />
          </label>
          <label>
            Type
            <select
              name="type"
              value={draft.type}
              onChange={(e) => setDraft({ ...draft, type: (e.currentTarget as HTMLSelectElement).value })}
            >
              <option value="string">text</option>
              <option value="integer">integer</option>
              <option value="boolean">true/false</option>
            </select>
          </label>
          <label>
            Value
            <input
              name="value"
              value={draft.value}
              onInput={(e) => setDraft({ ...draft, value: (e.currentTarget as HTMLInputElement).value })}
            />
          </label>
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save tag'}
          </button>
          {error && (
            <p role="alert" class="error">
              {error}
            </p>
          )}
        </form>
      ) : (
        <p class="muted">Read-only: tagging needs a key with the calls scope.</p>
      )}
    </>
  );
}
