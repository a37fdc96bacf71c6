// The Live tab: per variant, one chart on the time axis every variant shares (seconds since the swarm
// started): requests/s answered and failed, latency p50 and p95 against the requested latency, Ready
// pods / total and cumulative restarts, and a strip on top with every liveness failure, liveness kill
// and container restart, each failure with its countdown ("1/3", "2/3", then the kill; hover for its time
// and message); the same events as vertical lines through the panels. Data: GET liveness-lab/live (locust/liveness_lab/locust_ext/live_view.py), read every refresh_s
// seconds; the colours and marker styles come with it (liveness_lab/base/style.py, as in report.html).
// Drawn with echarts, the charting library of Locust's own Charts tab.
import { useEffect, useRef, useState } from 'react';
import { useSelector } from 'react-redux';
import * as echarts from 'echarts/core';
import { LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { LabelLayout } from 'echarts/features';
import { SVGRenderer } from 'echarts/renderers';

echarts.use([LineChart, ScatterChart, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent, LabelLayout, SVGRenderer]);

const FONT = 18; // readable from the back of a room on a projector
const ENDPOINT = 'liveness-lab/live';

// For the tests and for anyone in the browser console: the charts by variant.
window.livenessLabCharts = window.livenessLabCharts || {};

function utc(epoch) {
  return new Date(epoch * 1000).toISOString().slice(11, 19) + ' UTC';
}

function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
  return null;
}

function pairs(series, key, started) {
  return series.t.map((t, i) => [+(t - started).toFixed(1), series[key][i]]);
}

function headline(v) {
  const s = v.series;
  const rps = last(s.rps);
  const fps = last(s.fps);
  const pods = last(s.pods);
  const ready = last(s.ready);
  const podText = !v.has_pods && pods === 0 ? 'no pods' : pods === null ? 'pods ?' : `Ready ${ready}/${pods}`;
  return {
    text: `${v.name}`,
    subtext: `answered ${rps === null ? '?' : rps.toFixed(1)} req/s · failed ${fps === null ? '?' : fps.toFixed(1)}/s · ${podText} · restarts ${last(s.restarts) ?? 0}`,
  };
}

function chartOption(v, data, dark) {
  const { started, now, latency_ms: latencyMs, style } = data;
  const span = Math.max(30, Math.ceil(now - started));
  const text = dark ? '#e0e0e0' : '#222222';
  const grid = dark ? '#444444' : '#dddddd';
  const colour = v.colour;
  const kinds = style.markers;
  // The events and the restarts are black on Locust's light theme, white on its dark one.
  const ink = (c) => (dark && c === '#000000' ? '#ffffff' : c);
  const rel = (t) => +(t - started).toFixed(1);
  // Four panels, one x axis: the event strip, req/s, latency, pods (the title and legend above them).
  const grids = [
    { left: 120, right: 30, top: '17%', height: '4%' },
    { left: 120, right: 30, top: '24%', height: '21%' },
    { left: 120, right: 30, top: '49%', height: '19%' },
    { left: 120, right: 30, top: '72%', height: '14%' },
  ];
  const xAxis = grids.map((_, i) => ({
    type: 'value', gridIndex: i, min: 0, max: span,
    axisLabel: { show: i === 3, fontSize: FONT, color: text, formatter: '{value} s' },
    axisTick: { show: i === 3 }, splitLine: { show: i > 0, lineStyle: { color: grid } },
    name: i === 3 ? 'seconds since the swarm started' : '', nameLocation: 'middle', nameGap: 32, nameTextStyle: { fontSize: FONT, color: text },
  }));
  const yName = (name) => ({ name, nameLocation: 'middle', nameGap: 84, nameTextStyle: { fontSize: FONT, color: text } });
  const yAxis = [
    { type: 'value', gridIndex: 0, min: 0, max: 1, axisLabel: { show: false }, axisTick: { show: false }, splitLine: { show: false },
      name: 'events', nameLocation: 'middle', nameRotate: 0, nameGap: 40, nameTextStyle: { fontSize: FONT - 4, color: text } },
    { type: 'value', gridIndex: 1, min: 0, axisLabel: { fontSize: FONT, color: text }, splitLine: { lineStyle: { color: grid } }, ...yName('req/s') },
    { type: 'value', gridIndex: 2, min: 0, axisLabel: { fontSize: FONT, color: text, formatter: (x) => (x >= 1000 ? `${x / 1000} s` : `${x} ms`) }, splitLine: { lineStyle: { color: grid } }, ...yName('latency') },
    { type: 'value', gridIndex: 3, min: 0, minInterval: 1, axisLabel: { fontSize: FONT, color: text }, splitLine: { lineStyle: { color: grid } }, ...yName('pods') },
  ];
  // The events as vertical lines through the three data panels (no hover there: the strip has it).
  const eventLines = {
    silent: true, symbol: 'none', label: { show: false }, animation: false,
    data: v.markers.map((m) => ({ xAxis: rel(m.t), lineStyle: { color: ink(kinds[m.kind].colour), type: kinds[m.kind].dash, width: kinds[m.kind].width } })),
  };
  const line = (name, key, grid, extra = {}) => ({
    name, type: 'line', xAxisIndex: grid, yAxisIndex: grid, data: pairs(v.series, key, started), showSymbol: false,
    connectNulls: false, animation: false, lineStyle: { color: colour, width: 3, ...(extra.lineStyle || {}) },
    itemStyle: { color: colour }, ...extra, ...(extra.lineStyle ? { lineStyle: { color: colour, width: 3, ...extra.lineStyle } } : {}),
  });
  const series = [
    line('answered req/s', 'rps', 1, { markLine: eventLines }),
    line('failed req/s', 'fps', 1, { lineStyle: { type: 'dotted' } }),
    line('p50', 'p50', 2, { markLine: { ...eventLines, data: [...eventLines.data, {
      yAxis: latencyMs, lineStyle: { color: style.reference, type: 'dashed', width: 2 },
      label: { show: true, position: 'insideEndTop', formatter: `requested ${latencyMs} ms`, fontSize: FONT - 2, color: text },
    }] } }),
    line('p95', 'p95', 2, { lineStyle: { type: 'dashed' } }),
    line('Ready pods', 'ready', 3, { step: 'end', markLine: eventLines }),
    { name: 'pods', type: 'line', step: 'end', xAxisIndex: 3, yAxisIndex: 3, data: pairs(v.series, 'pods', started), showSymbol: false, animation: false,
      lineStyle: { color: style.reference, type: 'dashed', width: 2 }, itemStyle: { color: style.reference } },
    { name: 'restarts (total)', type: 'line', step: 'end', xAxisIndex: 3, yAxisIndex: 3, data: pairs(v.series, 'restarts', started), showSymbol: false, animation: false,
      lineStyle: { color: ink('#000000'), width: 2 }, itemStyle: { color: ink('#000000') } },
    // The strip's symbols; a failure's countdown ("2/3") written above it (hidden where labels would overlap).
    ...Object.entries(kinds).map(([kind, k]) => ({
      name: k.label, type: 'scatter', xAxisIndex: 0, yAxisIndex: 0, symbol: k.echarts, symbolRotate: k.rotate, symbolSize: 20, animation: false,
      itemStyle: k.hollow ? { color: 'transparent', borderColor: ink(k.colour), borderWidth: 2 } : { color: ink(k.colour) },
      label: { show: true, position: 'top', distance: 2, fontSize: FONT - 4, color: text, formatter: (p) => p.data.marker.label || '' },
      labelLayout: { hideOverlap: true },
      data: v.markers.filter((m) => m.kind === kind).map((m) => ({ value: [rel(m.t), 0.5], marker: m })),
    })),
  ];
  return {
    animation: false,
    textStyle: { fontSize: FONT },
    title: { ...headline(v), left: 10, top: 0, textStyle: { fontSize: 30, color: colour, fontWeight: 'bold' }, subtextStyle: { fontSize: FONT + 2, color: text } },
    legend: { top: 66, left: 120, right: 10, textStyle: { fontSize: FONT - 2, color: text }, itemWidth: 28, data: ['answered req/s', 'failed req/s', 'p50', 'p95', 'Ready pods', 'pods', 'restarts (total)', ...Object.values(kinds).map((k) => k.label)] },
    // One tooltip for the time under the pointer: the probe events within 1 % of the axis there (which
    // failure of the threshold, the time, the kubelet's message, the pod), then every line's value.
    tooltip: {
      trigger: 'axis', confine: true, textStyle: { fontSize: FONT }, axisPointer: { type: 'line' },
      // A marker's text is a sentence or two (why a failure had no event): wrapped, not one wide line.
      extraCssText: 'white-space: normal; max-width: 760px;',
      formatter: (params) => {
        const at = params.length ? params[0].axisValue : 0;
        const near = v.markers.filter((m) => Math.abs(rel(m.t) - at) <= span / 100);
        // The text says which failure of the threshold it is and what the kubelet said (live_view.py).
        const events = near.map((m) => `<b>${m.text}</b><br/>${utc(m.t)}, ${m.pod}`);
        const values = params.filter((p) => p.seriesType === 'line' && p.value && p.value[1] !== null && p.value[1] !== undefined)
          .map((p) => `${p.marker} ${p.seriesName}: ${p.value[1]}`);
        return [`+${Number(at).toFixed(0)} s`, ...events, ...values].join('<br/>');
      },
    },
    axisPointer: { link: [{ xAxisIndex: 'all' }] },
    grid: grids, xAxis, yAxis, series,
  };
}

function VariantChart({ variant, data, dark }) {
  const ref = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    chart.current = echarts.init(ref.current, null, { renderer: 'svg' });
    window.livenessLabCharts[variant.name] = chart.current;
    // The grid decides the width: follow it (a window resize, a variant more or less, the tab shown).
    const observer = new ResizeObserver(() => chart.current && chart.current.resize());
    observer.observe(ref.current);
    return () => {
      observer.disconnect();
      delete window.livenessLabCharts[variant.name];
      chart.current.dispose();
      chart.current = null;
    };
  }, [variant.name]);
  useEffect(() => {
    chart.current.setOption(chartOption(variant, data, dark), { notMerge: true });
  }, [variant, data, dark]);
  const kills = variant.markers.filter((m) => m.kind === 'kill');
  const restarts = variant.markers.filter((m) => m.kind === 'restart');
  return (
    <section aria-label={`${variant.name} variant`} data-variant={variant.name} data-kills={JSON.stringify(kills.map((m) => m.t))}
      style={{ minWidth: 0 }}>
      <div ref={ref} role='img' aria-label={`${variant.name} chart`} style={{ height: 'calc(100vh - 190px)', minHeight: 700 }} />
      <p style={{ fontSize: FONT, margin: '4px 0 0 120px' }}>
        {variant.has_pods ? '' : 'No pods of this variant in the namespace. '}
        {`liveness kills: ${kills.length}${kills.length ? ` (last ${utc(kills[kills.length - 1].t)})` : ''} · restarts: ${restarts.length}`}
      </p>
    </section>
  );
}

export default function LiveTab() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const dark = useSelector(({ theme }) => theme && theme.isDarkMode);
  const refreshS = (data && data.refresh_s) || 2;
  useEffect(() => {
    let stopped = false;
    const read = async () => {
      try {
        const response = await fetch(ENDPOINT, { cache: 'no-store' });
        if (!response.ok) throw new Error(`${ENDPOINT} answered ${response.status}`);
        const body = await response.json();
        if (!stopped) { setData(body); setError(null); }
      } catch (e) {
        if (!stopped) setError(String(e));
      }
    };
    read();
    const timer = setInterval(read, refreshS * 1000);
    return () => { stopped = true; clearInterval(timer); };
  }, [refreshS]);

  const banner = (text) => <p role='status' style={{ fontSize: FONT + 2, padding: '8px 16px', margin: '8px 0', background: '#fff3cd', color: '#5c4400', borderRadius: 4 }}>{text}</p>;
  if (!data) return <div>{error ? banner(`The Live tab's data cannot be read: ${error}`) : banner('Reading the live view...')}</div>;
  const variants = data.variants;
  return (
    // The whole window's width, not Locust's 1200 px column: two charts side by side on a projector.
    <div style={{ padding: '8px 16px', width: '100vw', marginLeft: 'calc(50% - 50vw)', boxSizing: 'border-box' }}>
      {error && banner(`The Live tab's data cannot be read (showing the last read): ${error}`)}
      {!data.kube.ok && banner(`Kubernetes API unreachable: ${data.kube.error}. Pods and probe events are not shown; the load goes on.`)}
      {(!data.started || variants.length === 0) ? banner('No requests yet: the charts start with the swarm (Reset starts them again).') : (
        <div style={{ display: 'grid', gridTemplateColumns: `repeat(${Math.min(variants.length, 2)}, minmax(0, 1fr))`, gap: 16 }}>
          {variants.map((v) => <VariantChart key={v.name} variant={v} data={data} dark={dark} />)}
        </div>
      )}
    </div>
  );
}
