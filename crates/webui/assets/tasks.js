// Task runs on the page: the form that starts one (`POST /api/tasks`, a task file pasted as
// JSON or TOML, on a project or in a new folder) and the list of the run's tasks on its page,
// kept up to date from its events. The run itself is shown by the build page (narration,
// terminal, files); this module adds what only a task run has.

import { $, api, el } from './dom.js';
import { showError } from './errors.js';

/// Wire the form: a run that is queued is opened by `opened(id)`.
export function mountTaskForm(t, requestKey, opened) {
  $('ask-tasks').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const errorBox = $('task-error');
    errorBox.textContent = '';
    const text = $('task-plan').value.trim();
    if (!text) {
      errorBox.textContent = t('tasks.empty');
      return;
    }
    const body = {};
    if ($('task-format').value === 'toml') {
      body.plan = text;
      body.format = 'toml';
    } else {
      try {
        body.plan = JSON.parse(text);
      } catch (err) {
        errorBox.textContent = t('tasks.not_json', { message: err.message });
        return;
      }
    }
    const project = $('task-project').value.trim();
    if (project) body.project = project;
    const button = $('task-go');
    button.disabled = true;
    try {
      const made = await api('/api/tasks', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': requestKey() },
        body: JSON.stringify(body),
      });
      $('task-plan').value = '';
      opened(made.id);
    } catch (err) {
      // The server names the field at fault (`plan: at tasks[1].depends_on: …`).
      showError(errorBox, err, t);
    } finally {
      button.disabled = false;
    }
  });
}

/// Offer the open run's project to the form (the next task run works on it).
export function offerProject(id) {
  $('task-project').value = id;
}

/// Empty the run's task list (another run takes the screen).
export function clearTasks() {
  $('task-list').replaceChildren();
  $('task-box').hidden = true;
}

/// Show the task run `id`: each task that has ended, as the server has it. Tasks still to come
/// are added as their events arrive.
export async function showTasks(id, t) {
  $('task-box').hidden = false;
  const run = await api(`/api/tasks/${encodeURIComponent(id)}`);
  for (const task of run.tasks) setTask(t, task.id, task.type, task.status, task.message);
  return run;
}

/// A task event of the run on screen.
export function taskEvent(e, t) {
  if (e.type === 'task_started') setTask(t, e.task, e.kind, 'running', e.description);
  else if (e.type === 'task_finished') setTask(t, e.task, null, e.status, e.message);
}

function setTask(t, id, kind, status, message) {
  const list = $('task-list');
  let row = [...list.children].find((li) => li.dataset.task === id);
  if (!row) {
    row = el('li');
    row.dataset.task = id;
    row.append(el('span', { class: 'state' }), el('strong', {}, id), el('span', { class: 'kind' }), el('span', { class: 'message' }));
    list.append(row);
  }
  row.dataset.status = status;
  row.querySelector('.state').textContent = t(`task.${status}`);
  if (kind) row.querySelector('.kind').textContent = ` (${kind})`;
  row.querySelector('.message').textContent = message || '';
}
