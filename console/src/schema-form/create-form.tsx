import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api.ts';
import { LoadState } from '../page-kit/notice.tsx';
import { messageOf, useLoad } from '../page-kit/load.ts';
import { apiDocument } from './api-document.ts';
import { loadChoices, type Choice } from './catalog.ts';
import { FieldInput } from './field-input.tsx';
import { buildBody, describeFields, errorsByField, initialValues, requestBodySchema, type FormValues, type Source } from './form-schema.ts';

/**
 * A create form generated from an operation's body schema (SIP trunks, numbers, campaigns): the
 * API's 422 messages beside their fields, the answer handed to `onCreated`. `shows` hides fields
 * that depend on another one (the allowed IPs only for IP authorization).
 */
export function CreateForm<T>(props: {
  api: Api;
  path: string;
  /** The form's accessible name and the submit button's text. */
  name: string;
  submit: string;
  shows?(field: string, values: FormValues): boolean;
  onCreated(answer: T): void;
}) {
  const { api } = props;
  const loaded = useLoad(async () => {
    const schema = requestBodySchema(await apiDocument(api), props.path, 'post');
    if (!schema) throw new Error(`The API document has no body schema for POST ${props.path}.`);
    return describeFields(schema, { order: 'schema' });
  }, [props.path]);
  if (!loaded.data) return <LoadState loading={loaded.loading} error={loaded.error} what="the form" />;
  return <Form {...props} fields={loaded.data} />;
}

function Form<T>(props: Parameters<typeof CreateForm<T>>[0] & { fields: ReturnType<typeof describeFields> }) {
  const { api, fields } = props;
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const [focusTick, setFocusTick] = useState(0);
  const form = useRef<HTMLFormElement>(null);
  const idPrefix = props.path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');
  const shown = fields.filter((f) => props.shows?.(f.name, values) ?? true);
  const sources = useMemo(() => [...new Set(fields.map((f) => f.source).filter((s): s is Source => !!s))], [fields]);
  const choices = useLoad(async (signal) => {
    const lists = await Promise.all(sources.map((s) => loadChoices(api, s, {}, signal).then((c) => [s, c] as const)));
    return Object.fromEntries(lists) as Partial<Record<Source, Choice[]>>;
  }, [sources.join()]);
  useEffect(() => {
    if (focusTick > 0) form.current?.querySelector<HTMLElement>('[aria-invalid="true"], .form-error')?.focus();
  }, [focusTick]);

  return (
    <form
      ref={form}
      class="generated-form compact"
      aria-label={props.name}
      onSubmit={async (e) => {
        e.preventDefault();
        const built = buildBody(shown, values, { update: false });
        if (Object.keys(built.errors).length > 0) {
          setErrors(built.errors);
          setFocusTick((n) => n + 1);
          return;
        }
        setBusy(true);
        try {
          const answer = await api.post<T>(props.path, built.body);
          setErrors({});
          setValues(initialValues(fields));
          props.onCreated(answer);
        } catch (err) {
          const byField = err instanceof ApiError && err.status === 422 ? errorsByField(err.fieldErrors, shown) : {};
          setErrors(Object.keys(byField).length > 0 ? byField : { '': [messageOf(err)] });
          setFocusTick((n) => n + 1);
        } finally {
          setBusy(false);
        }
      }}
    >
      {errors['']?.length ? (
        <p class="error form-error" role="alert" tabIndex={-1}>
          {errors[''].join(' ')}
        </p>
      ) : null}
      <div class="field-grid">
        {shown.map((f) => (
          <FieldInput key={f.name} idPrefix={idPrefix} field={f} value={values[f.name] ?? ''} errors={errors[f.name]} choices={f.source ? choices.data?.[f.source] : undefined} onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
        ))}
      </div>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : props.submit}
      </button>
    </form>
  );
}
