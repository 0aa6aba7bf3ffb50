// Your model spend this month against your monthly cap, in the header (GET /api/spend): past
// 80 % of the cap the line turns to a warning, at the cap it says that builds, explanations and
// chat wait for the month to reset (or an admin to raise the cap).

import { $, api } from './dom.js';

export const usd = (v) => (v !== 0 && Math.abs(v) < 0.01 ? `$${v.toFixed(4)}` : `$${(v || 0).toFixed(2)}`);

/// Fill #spend; `t` translates. Quietly empty when the figures cannot be had.
export async function showSpend(t) {
  const line = $('spend');
  if (!line) return;
  let s;
  try {
    s = await api('/api/spend');
  } catch {
    line.hidden = true;
    return;
  }
  const spent = usd(s.cost_usd);
  line.textContent = s.cap_usd == null ? t('spend.line_nocap', { spent }) : t('spend.line', { spent, cap: usd(s.cap_usd) });
  line.dataset.state = s.over_cap ? 'over' : s.warning ? 'warning' : 'ok';
  line.title = s.over_cap
    ? t('spend.over', { reset: s.resets_at.slice(0, 10) })
    : s.warning || t('spend.projected', { projected: usd(s.projected_usd) });
  line.hidden = false;
}
