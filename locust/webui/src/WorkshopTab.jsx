// The Workshop tab: the workshop's steps in order, each with its goal, a prediction to make, its self-check
// (re-run by the master every few seconds against what the swarm measured; the reason in words while it is
// not met), hints one at a time, the solution, Skip (the master upgrades the release to the step's values with
// Helm) and Reset (the release back to how the workshop found it); done/total kept by the master in a ConfigMap, so a reload or
// a restarted master shows the same. Data and actions: liveness-lab/workshop
// (locust/liveness_lab/workshop/tab.py). Drawn with MUI, as Locust's own tabs are.
// WorkshopBanner: the same workshop's current step above Locust's start form, where no tab is shown yet.
import { useCallback, useEffect, useState } from 'react';
import {
  Alert, Box, Button, Chip, Divider, FormControlLabel, LinearProgress, List, ListItemButton, Paper, Radio, RadioGroup,
  Stack, Table, TableBody, TableCell, TableHead, TableRow, Typography,
} from '@mui/material';

const ENDPOINT = 'liveness-lab/workshop';
// How each state of a check is shown: its chip's colour and words.
const STATES = {
  met: ['success', 'met'],
  checking: ['info', 'checking'],
  'not as predicted': ['error', 'not as predicted'],
  change: ['warning', 'change not in place'],
  settling: ['warning', 'release changing'],
  waiting: ['default', 'waiting for a swarm'],
  load: ['warning', "not the lab's load"],
  disturbed: ['warning', 'disturbed'],
  unknown: ['default', 'unknown'],
};
const LINE = { held: '✓', 'not yet': '…', 'not held': '✗', 'nothing to judge': '–' };

function useWorkshop() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const read = useCallback(async () => {
    try {
      const response = await fetch(ENDPOINT, { cache: 'no-store' });
      if (response.status === 404) throw new Error('this master serves no workshop (the chart\'s locust.workshop.enabled is off)');
      const body = await response.json();
      if (!response.ok) throw new Error(body.detail || `${ENDPOINT} answered ${response.status}`);
      setData(body);
      setError(null);
    } catch (e) {
      setError(String(e.message || e));
    }
  }, []);
  const refreshS = (data && data.refresh_s) || 3;
  useEffect(() => {
    read();
    const timer = setInterval(read, Math.min(refreshS, 3) * 1000);
    return () => clearInterval(timer);
  }, [read, refreshS]);
  return [data, error, read];
}

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.detail || `${path} answered ${response.status}`);
  return answer;
}

function fmtMs(ms) {
  if (ms === null || ms === undefined) return '?';
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${Math.round(ms)} ms`;
}

function Measured({ measured }) {
  const variants = Object.entries(measured || {});
  if (!variants.length) return null;
  return (
    <Table size='small' aria-label='measured in this swarm'>
      <TableHead>
        <TableRow>
          {['variant', 'requests', 'failed', 'p95 (asked)', 'restarts (reason)', 'liveness kills', 'last liveness failure', 'Ready'].map((h) => <TableCell key={h}>{h}</TableCell>)}
        </TableRow>
      </TableHead>
      <TableBody>
        {variants.map(([name, m]) => (
          <TableRow key={name} data-variant={name}>
            <TableCell>{name}</TableCell>
            <TableCell>{m.requests}</TableCell>
            <TableCell>{`${m.failures} (${(100 * m.failedShare).toFixed(1)} %)`}</TableCell>
            <TableCell>{`${fmtMs(m.p95)} (${fmtMs(m.latencyMs)})`}</TableCell>
            <TableCell>{m.restarts.length ? m.restarts.map((r) => `+${r.t} s ${r.reason || '?'}${r.exitCode ? ` ${r.exitCode}` : ''}${r.liveness ? ', after liveness failures' : ''}`).join('; ') : '0'}</TableCell>
            <TableCell>{m.livenessKills.length ? m.livenessKills.map((t) => `+${t} s`).join(', ') : '0'}{m.killWindow ? ` (window ${m.killWindow[0]}-${m.killWindow[1]} s)` : ''}</TableCell>
            <TableCell>{m.lastFailure || '-'}</TableCell>
            <TableCell>{m.ready ? `${m.ready.ready}/${m.ready.pods}` : '?'}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

function Check({ check }) {
  const [colour, words] = STATES[check.state] || STATES.unknown;
  return (
    <Paper variant='outlined' sx={{ p: 2, my: 2 }} data-testid='workshop-check' data-state={check.state} data-step={check.step}>
      <Stack direction='row' spacing={2} alignItems='center'>
        <Typography variant='h6'>Check</Typography>
        <Chip color={colour} label={words} />
        {check.elapsed !== null && check.elapsed !== undefined && <Typography color='text.secondary'>{`swarm +${Math.round(check.elapsed)} s`}</Typography>}
      </Stack>
      <Typography role='status' sx={{ mt: 1, fontSize: 18 }}>{check.reason}</Typography>
      {check.lines && check.lines.length > 0 && (
        <List dense>
          {check.lines.map((l) => (
            <li key={`${l.variant}-${l.key}`} data-line={`${l.variant}.${l.key}`} data-line-state={l.state}>
              <Typography component='span'>{`${LINE[l.state] || '?'} ${l.variant} ${l.key}: predicted ${l.predicted}, measured ${l.measured}`}</Typography>
            </li>
          ))}
        </List>
      )}
      <Measured measured={check.measured} />
    </Paper>
  );
}

function StepView({ step, data, check, act, busy }) {
  const current = check && check.step === step.name ? check : null;
  const question = step.question;
  const hintsLeft = step.hints - step.hintsShown.length;
  // The choice shows at once; the master keeps it (the next read brings it back after a reload).
  const [chosen, setChosen] = useState(step.prediction || '');
  useEffect(() => setChosen(step.prediction || ''), [step.name, step.prediction]);
  return (
    <Box data-testid='workshop-step' data-step={step.name} sx={{ flex: 1, minWidth: 0 }}>
      <Typography variant='h5' component='h2'>{step.title}</Typography>
      <Typography color='text.secondary' sx={{ mb: 1 }}>
        {`The lab's scenario ${step.scenario}: ${step.scenarioTitle}. Its load: ${step.load.users} users per variant at ${step.load.rate} request/s of ${step.load.latency_ms} ms.`}
      </Typography>
      <Typography sx={{ fontSize: 18 }}>{step.goal}</Typography>
      {question && (
        <Paper variant='outlined' sx={{ p: 2, my: 2 }}>
          <Typography sx={{ fontWeight: 'bold' }}>{`Predict: ${question.question}`}</Typography>
          <RadioGroup
            name={`predict-${step.name}`}
            value={chosen}
            onChange={(e) => { setChosen(e.target.value); act(`steps/${step.name}/predict`, { choice: e.target.value }); }}
          >
            {question.choices.map((c) => <FormControlLabel key={c} value={c} control={<Radio />} label={c} disabled={busy} />)}
          </RadioGroup>
          {step.answer && (
            <Alert severity={step.prediction === step.answer ? 'success' : 'info'} data-testid='workshop-answer'>
              {`The lab found: ${step.answer}.${step.prediction ? ` You predicted: ${step.prediction}.` : ''}`}
            </Alert>
          )}
        </Paper>
      )}
      {current ? <Check check={current} /> : <Alert severity='info' sx={{ my: 2 }}>Select this step to check it.</Alert>}
      {step.done && <Alert severity='success' sx={{ my: 1 }}>{`Done${step.metAt ? ` at ${new Date(step.metAt * 1000).toISOString().slice(11, 19)} UTC` : ''}.`}</Alert>}
      {step.lesson && <Typography sx={{ my: 1 }}>{`The lesson: ${step.lesson}`}</Typography>}
      <Stack direction='row' spacing={1} sx={{ my: 2, flexWrap: 'wrap', rowGap: 1 }}>
        <Button variant='outlined' disabled={busy || hintsLeft <= 0} onClick={() => act(`steps/${step.name}/hint`)}>
          {hintsLeft > 0 ? `Hint (${step.hintsShown.length + 1} of ${step.hints})` : 'No more hints'}
        </Button>
        <Button variant='outlined' disabled={busy || Boolean(step.solution)} onClick={() => act(`steps/${step.name}/solution`)}>Show solution</Button>
        <Button variant='contained' color='warning' disabled={busy} onClick={() => act(`steps/${step.name}/skip`)}>
          {Object.keys(step.values || {}).length ? 'Skip: apply the change for me' : 'Skip: put the release back for this step'}
        </Button>
        <Button variant='outlined' color='error' disabled={busy} onClick={() => act('reset')}>Reset the release</Button>
        {data.steps.findIndex((s) => s.name === step.name) < data.steps.length - 1 && (
          <Button variant='text' disabled={busy} onClick={() => act(`steps/${data.steps[data.steps.findIndex((s) => s.name === step.name) + 1].name}/select`)}>Next step</Button>
        )}
      </Stack>
      {step.hintsShown.length > 0 && (
        <Box data-testid='workshop-hints'>
          {step.hintsShown.map((h, i) => <Alert key={h} severity='info' sx={{ my: 0.5 }}>{`Hint ${i + 1}: ${h}`}</Alert>)}
        </Box>
      )}
      {step.solution && (
        <Paper variant='outlined' sx={{ p: 2, my: 1 }} data-testid='workshop-solution'>
          <Typography sx={{ fontWeight: 'bold' }}>Solution</Typography>
          <Box component='pre' sx={{ whiteSpace: 'pre-wrap', fontSize: 15, m: 0 }}>{step.solution}</Box>
        </Paper>
      )}
    </Box>
  );
}

export default function WorkshopTab() {
  const [data, error, read] = useWorkshop();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState(null);
  const act = async (path, body) => {
    setBusy(true);
    try {
      const answer = await post(`${ENDPOINT}/${path}`, body);
      setMessage(answer.message ? { severity: 'success', text: answer.message } : null);
    } catch (e) {
      setMessage({ severity: 'error', text: String(e.message || e) });
    } finally {
      setBusy(false);
      read();
    }
  };
  if (!data) return <Alert severity={error ? 'warning' : 'info'} sx={{ m: 2 }}>{error ? `The workshop cannot be read: ${error}` : 'Reading the workshop...'}</Alert>;
  const step = data.steps.find((s) => s.name === data.current) || data.steps[0];
  return (
    <Box sx={{ p: 2 }} data-testid='workshop' data-done={data.done} data-total={data.total}>
      <Stack direction='row' spacing={2} alignItems='center'>
        <Typography variant='h6' component='p'>{`Workshop: ${data.done}/${data.total} done`}</Typography>
        <Box sx={{ flex: 1 }}><LinearProgress variant='determinate' value={(100 * data.done) / data.total} sx={{ height: 10, borderRadius: 5 }} /></Box>
        <Typography color='text.secondary'>{`namespace ${data.namespace}`}</Typography>
      </Stack>
      {error && <Alert severity='warning' sx={{ my: 1 }}>{`The workshop cannot be read (showing the last read): ${error}`}</Alert>}
      {!data.store.ok && <Alert severity='warning' sx={{ my: 1 }}>{`${data.store.error}. A reload keeps it; a restart of the master does not.`}</Alert>}
      {message && <Alert severity={message.severity} sx={{ my: 1 }} onClose={() => setMessage(null)}>{message.text}</Alert>}
      <Stack direction='row' spacing={3} sx={{ mt: 2 }} alignItems='flex-start'>
        <List sx={{ width: 320, flexShrink: 0 }} aria-label='steps'>
          {data.steps.map((s, i) => (
            <ListItemButton key={s.name} selected={s.name === step.name} onClick={() => act(`steps/${s.name}/select`)} data-step-item={s.name} data-done={s.done}>
              <Typography>{`${s.done ? '✓' : s.skipped ? '↷' : `${i + 1}.`} ${s.title}`}</Typography>
            </ListItemButton>
          ))}
        </List>
        <Divider orientation='vertical' flexItem />
        <StepView step={step} data={data} check={data.check} act={act} busy={busy} />
      </Stack>
    </Box>
  );
}

// Above Locust's start form (no tab is shown before a swarm starts): the step the participant is on.
export function WorkshopBanner() {
  const [data] = useWorkshop();
  if (!data || (data.swarm.state && data.swarm.state !== 'ready')) return null;
  const index = data.steps.findIndex((s) => s.name === data.current);
  const step = data.steps[index];
  return (
    <Alert severity='info' sx={{ borderRadius: 0 }} data-testid='workshop-banner'>
      {`Workshop step ${index + 1} of ${data.total} (${data.done} done): ${step.title}. ${step.goal} The Workshop tab opens once the swarm starts.`}
    </Alert>
  );
}
