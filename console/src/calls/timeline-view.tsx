import type { TimelineItem, TimelineModel } from './draw/timeline.ts';
import { xOf } from './draw/timeline.ts';

/**
 * The turn timeline as SVG: one row per lane, spans as bars, marks as ticks, each with a <title>
 * (the tooltip) and the same text in a list for screen readers and keyboard users. A click seeks
 * the recording; the playhead follows it.
 */

const W = 1000;
const LEFT = 90;
const ROW = 30;
const AXIS = 22;

function ticks(durationMs: number): number[] {
  const steps = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];
  const step = steps.find((s) => durationMs / s <= 12) ?? 1_200_000;
  const out: number[] = [];
  for (let t = 0; t <= durationMs; t += step) out.push(t);
  return out;
}

export function TimelineView(props: { model: TimelineModel; positionMs: number; onSeek(ms: number): void }) {
  const { model } = props;
  const plot = W - LEFT - 10;
  const x = (ms: number) => LEFT + xOf(ms, model.durationMs, plot);
  const height = AXIS + model.lanes.length * ROW + 4;
  const all = model.lanes.flatMap((l) => l.items.map((item) => ({ lane: l.label, item })));
  return (
    <figure class="timeline">
      <div class="svg-scroll">
        <svg
          class="timeline-svg"
          viewBox={`0 0 ${W} ${height}`}
          role="img"
          aria-label="Turn timeline: caller speech, voice activity, decisions and assistant audio over the call"
          onClick={(e) => {
            const svg = e.currentTarget as SVGSVGElement;
            const r = svg.getBoundingClientRect();
            const vx = ((e.clientX - r.left) / r.width) * W;
            if (vx >= LEFT) props.onSeek(((vx - LEFT) / plot) * model.durationMs);
          }}
        >
          {ticks(model.durationMs).map((t) => (
            <g class="tl-tick" key={t}>
              <line x1={x(t)} x2={x(t)} y1={AXIS - 4} y2={height} />
              <text x={x(t)} y={AXIS - 8} text-anchor="middle">
                {`${Math.round(t / 1000)} s`}
              </text>
            </g>
          ))}
          {model.lanes.map((lane, i) => {
            const y = AXIS + i * ROW;
            return (
              <g class={`tl-lane tl-lane-${lane.id}`} key={lane.id} data-lane={lane.id}>
                <text class="tl-lane-label" x={4} y={y + ROW / 2 + 4}>
                  {lane.label}
                </text>
                <line class="tl-lane-line" x1={LEFT} x2={W - 10} y1={y + ROW / 2} y2={y + ROW / 2} />
                {lane.items.map((item, j) => (
                  <Item key={j} item={item} y={y} x={x} />
                ))}
              </g>
            );
          })}
          <line class="tl-playhead" x1={x(props.positionMs)} x2={x(props.positionMs)} y1={AXIS - 4} y2={height} />
        </svg>
      </div>
      {!model.hasEngineTimeline && <p class="hint">This call's tape has no engine timeline (recorded before it was kept): VAD and end-of-turn decisions are not shown.</p>}
      <details class="timeline-text">
        <summary>Timeline as text ({all.length} events)</summary>
        <ol>
          {all
            .sort((a, b) => start(a.item) - start(b.item))
            .map(({ lane, item }, i) => (
              <li key={i}>
                <button type="button" class="link-button" onClick={() => props.onSeek(start(item))}>
                  {lane}: {item.title}
                </button>
              </li>
            ))}
        </ol>
      </details>
    </figure>
  );
}

const start = (i: TimelineItem) => (i.kind === 'span' ? i.startMs : i.atMs);

function Item(props: { item: TimelineItem; y: number; x(ms: number): number }) {
  const { item, y, x } = props;
  if (item.kind === 'span') {
    const x0 = x(item.startMs);
    const w = Math.max(2, x(item.endMs) - x0);
    return (
      <g class={`tl-span tl-${item.tone}`} data-kind="span" data-tone={item.tone}>
        <title>{item.title}</title>
        <rect x={x0} y={y + 5} width={w} height={ROW - 10} rx={3} />
        {w > 60 && (
          <text x={x0 + 4} y={y + ROW / 2 + 4} class="tl-span-text">
            {item.label.slice(0, Math.floor((w - 8) / 8.5))}
          </text>
        )}
      </g>
    );
  }
  const cx = x(item.atMs);
  return (
    <g class={`tl-mark tl-${item.tone}`} data-kind="mark" data-tone={item.tone}>
      <title>{item.title}</title>
      <line x1={cx} x2={cx} y1={y + 3} y2={y + ROW - 3} />
      <path d={`M ${cx - 5} ${y + 3} L ${cx + 5} ${y + 3} L ${cx} ${y + 11} Z`} />
    </g>
  );
}
