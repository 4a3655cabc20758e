import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.ts';
import { messageOf } from '../page-kit/load.ts';
import { previewPath, type Choice } from '../schema-form/catalog.ts';

/**
 * Plays the chosen voice's sample. The engine's preview is fetched with the key (the page's
 * policy allows media from blob: only) and played from a blob: URL, revoked when replaced.
 */
export function VoicePreview(props: { api: Api; voice: Choice | undefined }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  useEffect(() => () => {
    if (url) URL.revokeObjectURL(url);
  }, [url]);
  const path = previewPath(props.voice?.previewUrl);
  if (!props.voice) return null;
  if (!path) return <p class="hint">This voice has no preview playable here.</p>;
  return (
    <div class="voice-preview">
      <button
        type="button"
        disabled={state.busy}
        onClick={async () => {
          setState({ busy: true });
          try {
            const blob = await props.api.blob(path);
            const next = URL.createObjectURL(blob);
            setUrl(next);
            const el = audio.current;
            if (el) {
              el.src = next;
              await el.play();
            }
            setState({ busy: false });
          } catch (err) {
            setState({ busy: false, error: messageOf(err) });
          }
        }}
      >
        {state.busy ? 'Loading preview…' : `Play preview of ${props.voice.label.split(' — ')[0]}`}
      </button>
      <audio ref={audio} controls aria-label="Voice preview" class={url ? undefined : 'hidden'} />
      {state.error && <p class="error">Preview failed: {state.error}</p>}
    </div>
  );
}
