import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api.ts';
import { Link } from '../link.tsx';
import { navigate } from '../router.ts';
import { ConfirmButton } from '../page-kit/confirm-button.tsx';
import { LoadState, Notice } from '../page-kit/notice.tsx';
import { messageOf, useLoad } from '../page-kit/load.ts';
import { loadChoices, type Choice } from '../schema-form/catalog.ts';
import { FieldInput } from '../schema-form/field-input.tsx';
import { apiDocument } from '../schema-form/api-document.ts';
import { setFlash, takeFlash, type Flash } from './flash.ts';
import {
  buildBody,
  describeFields,
  errorsByField,
  forMode,
  initialValues,
  MODES,
  requestBodySchema,
  type FieldDescriptor,
  type FormValue,
  type FormValues,
  type Mode,
  type Source,
} from '../schema-form/form-schema.ts';
import { VoicePreview } from './voice-preview.tsx';

interface Warning {
  field?: string;
  message: string;
}
interface SaveAnswer {
  message?: string;
  data?: { id?: number };
  warnings?: Warning[];
}

/** /assistants/new and /assistants/:id: the same generated form, POST or PUT. */
export function AssistantEditor(props: { api: Api; id?: string }) {
  const { api, id } = props;
  const editing = id !== undefined;
  const loaded = useLoad(
    async (signal) => {
      const [doc, record] = await Promise.all([apiDocument(api), editing ? api.get<Record<string, unknown>>(`/user/assistant/${id}`, signal) : undefined]);
      const schema = requestBodySchema(doc, editing ? '/user/assistant/{id}' : '/user/assistant', editing ? 'put' : 'post');
      if (!schema) throw new Error('The API document has no assistant body schema.');
      return { fields: describeFields(schema), record };
    },
    [id],
  );
  const title = editing ? (typeof loaded.data?.record?.name === 'string' ? loaded.data.record.name : 'Assistant') : 'New assistant';
  return (
    <section class="assistant-editor">
      <p class="crumbs">
        <Link to="/assistants">Assistants</Link>
      </p>
      <h1>{title}</h1>
      <LoadState loading={loaded.loading && !loaded.data} error={loaded.error} what="the assistant form" />
      {loaded.data && <AssistantForm key={id ?? 'new'} api={api} id={id} fields={loaded.data.fields} record={loaded.data.record} />}
    </section>
  );
}

function AssistantForm(props: { api: Api; id?: string; fields: FieldDescriptor[]; record?: Record<string, unknown> }) {
  const { api, id, record } = props;
  const editing = id !== undefined;
  const [values, setValues] = useState<FormValues>(() => initialValues(props.fields, record));
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const [flash, setFlashState] = useState<Flash | null>(() => takeFlash());
  const form = useRef<HTMLFormElement>(null);
  const summary = useRef<HTMLDivElement>(null);

  const mode = (MODES as readonly string[]).includes(values.mode as string) ? (values.mode as Mode) : 'pipeline';
  const shown = useMemo(() => forMode(props.fields, mode), [props.fields, mode]);
  const languageId = typeof values.language_id === 'string' ? values.language_id : '';

  const sources = useMemo(() => [...new Set(props.fields.map((f) => f.source).filter((s): s is Source => !!s && s !== 'voices'))], [props.fields]);
  const fixed = useLoad(async (signal) => {
    const lists = await Promise.all(sources.map((s) => loadChoices(api, s, {}, signal).then((c) => [s, c] as const)));
    return Object.fromEntries(lists) as Partial<Record<Source, Choice[]>>;
  }, [sources.join()]);
  const voices = useLoad((signal) => loadChoices(api, 'voices', { mode, languageId }, signal), [mode, languageId]);
  const choicesOf = (s: Source | undefined): Choice[] | undefined => (s === 'voices' ? voices.data : s ? fixed.data?.[s] : undefined);

  // After a refused save, the first field named goes to focus (or the summary, if none is shown).
  const [focusTick, setFocusTick] = useState(0);
  useEffect(() => {
    if (focusTick === 0) return;
    const first = form.current?.querySelector<HTMLElement>('[aria-invalid="true"] input, [aria-invalid="true"]');
    (first ?? summary.current)?.focus();
  }, [focusTick]);

  const set = (name: string, value: FormValue) => setValues((v) => ({ ...v, [name]: value }));
  const count = Object.values(errors).reduce((n, m) => n + m.length, 0);
  const voice = voices.data?.find((v) => v.value === values.voice_id);

  async function save(e: Event) {
    e.preventDefault();
    setFlashState(null);
    const built = buildBody(shown, values, { update: editing });
    if (Object.keys(built.errors).length > 0) {
      setErrors(built.errors);
      setFocusTick((n) => n + 1);
      return;
    }
    setBusy(true);
    try {
      const answer = editing ? await api.put<SaveAnswer>(`/user/assistant/${id}`, built.body) : await api.post<SaveAnswer>('/user/assistant', built.body);
      setErrors({});
      const next: Flash = { message: editing ? 'Saved.' : 'Assistant created.', warnings: answer.warnings ?? [] };
      if (editing) setFlashState(next);
      else {
        setFlash(next);
        navigate(`/assistants/${answer.data?.id ?? ''}`);
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) {
        const byField = errorsByField(err.fieldErrors, shown);
        setErrors(Object.keys(byField).length > 0 ? byField : { '': [err.message] });
      } else {
        setErrors({ '': [messageOf(err)] });
      }
      setFocusTick((n) => n + 1);
    } finally {
      setBusy(false);
    }
  }

  const groups = [...new Set(shown.map((f) => f.group))];
  return (
    <>
      {editing && (
        <div class="toolbar">
          <Link to={`/assistants/${id}/talk`} class="button-link">
            Call
          </Link>
          <ConfirmButton
            label="Delete assistant"
            danger
            question={`Delete ${String(record?.name ?? 'this assistant')} with its configuration and call history? This cannot be undone.`}
            confirmLabel="Delete permanently"
            onConfirm={async () => {
              try {
                await api.del(`/user/assistant/${id}`);
                navigate('/assistants');
              } catch (err) {
                setErrors({ '': [messageOf(err)] });
              }
            }}
          />
        </div>
      )}
      {flash && (
        <div class="flash">
          <Notice>{flash.message}</Notice>
          {flash.warnings.length > 0 && (
            <ul class="warnings" aria-label="Warnings">
              {flash.warnings.map((w, i) => (
                <li key={i}>{w.message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      {count > 0 && (
        <div ref={summary} tabIndex={-1} class="error-summary" role="alert">
          <p>
            The assistant was not saved: {count === 1 ? 'one problem' : `${count} problems`}.
          </p>
          <ul>
            {Object.entries(errors).map(([name, messages]) => (
              <li key={name}>{name ? <a href={`#f-${name}`}>{shown.find((f) => f.name === name)?.label ?? name}: {messages.join(' ')}</a> : messages.join(' ')}</li>
            ))}
          </ul>
        </div>
      )}
      <LoadState loading={false} error={fixed.error ?? voices.error} what="the choices" />
      <form ref={form} class="generated-form" onSubmit={save} aria-label={editing ? 'Edit assistant' : 'New assistant'}>
        {groups.map((group) => (
          <fieldset key={group} class="form-group">
            <legend>{group}</legend>
            {shown
              .filter((f) => f.group === group)
              .map((f) => (
                <FieldInput
                  key={f.name}
                  field={f}
                  value={values[f.name] ?? ''}
                  errors={errors[f.name]}
                  choices={choicesOf(f.source)}
                  onChange={(v) => set(f.name, v)}
                  extra={f.name === 'voice_id' ? <VoicePreview api={api} voice={voice} /> : undefined}
                />
              ))}
          </fieldset>
        ))}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : editing ? 'Save changes' : 'Create assistant'}
          </button>
        </div>
      </form>
    </>
  );
}
