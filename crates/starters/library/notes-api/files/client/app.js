// The dining room: the page asks the server (the kitchen) for notes with fetch.
const MAX_LENGTH = {{ max_length|tojson }};
const LANGUAGE = {{ language|tojson }};

const TEXT = {
  en: {
    loading: 'Loading notes…', empty: 'No notes yet. Be the first to write one!',
    offline: 'Could not reach the server. Is it running?', anonymous: 'Someone',
    delete: 'Delete', failed: 'Could not save the note.', locale: 'en',
  },
  pt: {
    loading: 'Carregando recados…', empty: 'Nenhum recado ainda. Seja o primeiro a escrever!',
    offline: 'Não foi possível falar com o servidor. Ele está rodando?', anonymous: 'Alguém',
    delete: 'Apagar', failed: 'Não foi possível salvar o recado.', locale: 'pt-BR',
  },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

const form = document.getElementById('note-form');
const nameInput = document.getElementById('name');
const textInput = document.getElementById('text');
const counter = document.getElementById('counter');
const sendButton = document.getElementById('send');
const errorBox = document.getElementById('error');
const statusEl = document.getElementById('status');
const list = document.getElementById('notes');

function showError(message) {
  errorBox.textContent = message || '';
  errorBox.hidden = !message;
}

function formatDate(iso) {
  const date = new Date(iso);
  if (isNaN(date)) return '';
  return date.toLocaleString(TEXT.locale, { dateStyle: 'medium', timeStyle: 'short' });
}

function render(notes) {
  list.innerHTML = '';
  statusEl.textContent = notes.length === 0 ? TEXT.empty : '';
  for (const note of notes) {
    const li = document.createElement('li');
    li.className = 'note';
    const text = document.createElement('p');
    text.className = 'note-text';
    text.textContent = note.text;
    const meta = document.createElement('div');
    meta.className = 'note-meta';
    const who = document.createElement('span');
    who.textContent = (note.name || TEXT.anonymous) + ' · ' + formatDate(note.createdAt);
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'delete';
    del.textContent = TEXT.delete;
    del.addEventListener('click', () => removeNote(note.id));
    meta.append(who, del);
    li.append(text, meta);
    list.append(li);
  }
}

async function loadNotes() {
  try {
    const res = await fetch('/api/notes');
    if (!res.ok) throw new Error('status ' + res.status);
    render(await res.json());
  } catch (e) {
    statusEl.textContent = TEXT.offline;
  }
}

async function removeNote(id) {
  try {
    await fetch('/api/notes/' + encodeURIComponent(id), { method: 'DELETE' });
  } catch (e) {
    statusEl.textContent = TEXT.offline;
  }
  loadNotes();
}

function updateCounter() {
  counter.textContent = [...textInput.value].length + ' / ' + MAX_LENGTH;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  showError('');
  sendButton.disabled = true;
  try {
    const res = await fetch('/api/notes', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: textInput.value, name: nameInput.value }),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      showError(data.error || TEXT.failed);
    } else {
      textInput.value = '';
      updateCounter();
      await loadNotes();
    }
  } catch (e) {
    showError(TEXT.offline);
  } finally {
    sendButton.disabled = false;
  }
});

textInput.addEventListener('input', updateCounter);
textInput.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
});

statusEl.textContent = TEXT.loading;
loadNotes();
