import type { ComponentChildren } from 'preact';
import type { Choice } from './catalog.ts';
import type { FieldDescriptor, FormValue } from './form-schema.ts';

/**
 * One generated input: label, control, hint and the API's messages for it. The control names its
 * hint and errors with aria-describedby and is aria-invalid while the API refuses its value.
 */
export function FieldInput(props: {
  field: FieldDescriptor;
  value: FormValue;
  errors: string[] | undefined;
  choices?: Choice[];
  onChange(value: FormValue): void;
  /** Shown under the control (the voice preview). */
  extra?: ComponentChildren;
  /** Keeps ids unique when one page holds several generated forms (`f` by default). */
  idPrefix?: string;
}) {
  const { field: f, value, errors } = props;
  const id = `${props.idPrefix ?? 'f'}-${f.name}`;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [f.hint ? hintId : '', errors?.length ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const invalid = errors?.length ? true : undefined;
  const text = typeof value === 'string' ? value : '';
  const common = { id, name: f.name, 'aria-describedby': described, 'aria-invalid': invalid };
  const setText = (e: Event) => props.onChange((e.target as HTMLInputElement).value);

  let control: ComponentChildren;
  switch (f.kind) {
    case 'boolean':
      control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)} />;
      break;
    case 'textarea':
    case 'list':
    case 'json':
      control = (
        <textarea
          {...common}
          class={f.kind === 'json' ? 'mono' : undefined}
          rows={f.kind === 'textarea' ? 5 : 3}
          required={f.required}
          maxLength={f.maxLength}
          value={text}
          onInput={setText}
          spellcheck={f.kind !== 'json'}
        />
      );
      break;
    case 'integer':
    case 'number':
      control = <input {...common} type="number" inputMode={f.kind === 'integer' ? 'numeric' : 'decimal'} min={f.min} max={f.max} step={f.step} required={f.required} value={text} onInput={setText} />;
      break;
    case 'choice':
    case 'reference': {
      const options: Choice[] = f.kind === 'choice' ? (f.options ?? []).map((o) => ({ value: o, label: o })) : (props.choices ?? []);
      const known = options.some((o) => o.value === text);
      control = (
        <select {...common} required={f.required} value={text} onChange={setText}>
          {(!f.required || text === '') && <option value="">{f.required ? 'Choose…' : emptyLabel(f)}</option>}
          {!known && text !== '' && <option value={text}>#{text}</option>}
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    }
    case 'references': {
      const picked = Array.isArray(value) ? value : [];
      const choices = props.choices ?? [];
      return (
        <fieldset class="field field-many" aria-describedby={described} aria-invalid={invalid}>
          <legend>{f.label}</legend>
          {choices.length === 0 && <p class="hint">None available.</p>}
          <ul class="checks">
            {choices.map((c) => {
              const n = Number(c.value);
              return (
                <li key={c.value}>
                  <label>
                    <input
                      type="checkbox"
                      name={f.name}
                      value={c.value}
                      checked={picked.includes(n)}
                      onChange={(e) => props.onChange((e.target as HTMLInputElement).checked ? [...picked, n] : picked.filter((x) => x !== n))}
                    />{' '}
                    {c.label}
                  </label>
                </li>
              );
            })}
          </ul>
          <Messages field={f} hintId={hintId} errorId={errorId} errors={errors} />
        </fieldset>
      );
    }
    case 'secret':
      control = <input {...common} type="password" autocomplete="new-password" required={f.required} minLength={f.minLength} maxLength={f.maxLength} value={text} onInput={setText} />;
      break;
    case 'url':
      control = <input {...common} type="url" required={f.required} maxLength={f.maxLength} value={text} onInput={setText} />;
      break;
    default:
      // A required text without a minimum length may be empty (initial_message): not `required` here.
      control = <input {...common} type="text" required={f.required && f.minLength !== undefined} minLength={f.minLength} maxLength={f.maxLength} value={text} onInput={setText} />;
  }

  return (
    <div class={f.kind === 'boolean' ? 'field field-check' : 'field'}>
      {f.kind === 'boolean' ? (
        <>
          {control}
          <label for={id}>{f.label}</label>
        </>
      ) : (
        <>
          <label for={id}>
            {f.label}
            {f.required && <span class="required" aria-hidden="true"> *</span>}
          </label>
          {control}
        </>
      )}
      {props.extra}
      <Messages field={f} hintId={hintId} errorId={errorId} errors={errors} />
    </div>
  );
}

function emptyLabel(f: FieldDescriptor): string {
  if (f.name === 'synthesizer_provider_id' || f.name === 'transcriber_provider_id') return '(automatic)';
  return '(none)';
}

function Messages(props: { field: FieldDescriptor; hintId: string; errorId: string; errors: string[] | undefined }) {
  return (
    <>
      {props.field.hint && (
        <p id={props.hintId} class="hint">
          {props.field.hint}
        </p>
      )}
      {props.errors?.length ? (
        <p id={props.errorId} class="error field-error">
          {props.errors.join(' ')}
        </p>
      ) : null}
    </>
  );
}
