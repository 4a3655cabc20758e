import type { WaterfallModel } from './draw/waterfall.ts';
import { WATERFALL_LABELS } from './draw/waterfall.ts';
import { formatMs } from './format.ts';

/** The latency waterfall: per reply, one SVG row per latency part on one shared scale. */

const W = 1000;
const LABEL = 330;
const ROW = 22;

export function WaterfallView(props: { model: WaterfallModel; onSeek(ms: number): void }) {
  const { model } = props;
  if (model.turns.length === 0) return <p>No reply of this call recorded its latency.</p>;
  const plot = W - LABEL - 80;
  const x = (ms: number) => LABEL + (ms / model.maxMs) * plot;
  return (
    <div class="waterfall">
      {model.turns.map((turn) => {
        const height = turn.bars.length * ROW + 6;
        return (
          <figure class="waterfall-turn" key={turn.index} data-turn={turn.index}>
            <figcaption>
              <button type="button" class="link-button" onClick={() => props.onSeek(turn.atMs)}>
                Turn {turn.index}
              </button>{' '}
              {turn.caller ? <q>{turn.caller}</q> : null}
              {turn.totalMs !== undefined && <span class="hint"> — {formatMs(turn.totalMs)} from end of speech to the reply</span>}
              {turn.missing.length > 0 && <span class="hint"> (not recorded: {turn.missing.map((k) => WATERFALL_LABELS[k]).join('; ')})</span>}
            </figcaption>
            <div class="svg-scroll">
              <svg class="waterfall-svg" viewBox={`0 0 ${W} ${height}`} role="group" aria-label={`Latency of turn ${turn.index}`}>
                {turn.bars.map((bar, i) => {
                  const y = i * ROW + 3;
                  const text = `${bar.label}: ${formatMs(bar.endMs - bar.startMs)}${bar.approximate ? ' (start approximate)' : ''}`;
                  return (
                    <g class={`wf-bar wf-${bar.key}${bar.approximate ? ' wf-approximate' : ''}`} key={bar.key} data-key={bar.key}>
                      <title>{text}</title>
                      <text class="wf-label" x={4} y={y + ROW / 2 + 3}>
                        {bar.label}
                      </text>
                      <rect x={x(bar.startMs)} y={y + 3} width={Math.max(2, x(bar.endMs) - x(bar.startMs))} height={ROW - 8} rx={2} />
                      <text class="wf-value" x={x(bar.endMs) + 6} y={y + ROW / 2 + 3}>
                        {formatMs(bar.endMs - bar.startMs)}
                      </text>
                    </g>
                  );
                })}
              </svg>
            </div>
          </figure>
        );
      })}
    </div>
  );
}
