// The test page's own behaviour: a combobox that filters and picks, a switch, a "React-like"
// controlled input (its state changes only when an input event brings a new value, as React's
// value tracker decides), a Save that opens a dialog, and a log of the events fields hear.
import * as a11y from '/assistant/a11y.js';

window.a11y = a11y;
window.heard = [];
window.violations = [];
window.errors = [];
addEventListener('error', (e) => window.errors.push(String(e.message)));
addEventListener('unhandledrejection', (e) => window.errors.push(String(e.reason?.stack || e.reason)));
document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
const $ = (id) => document.getElementById(id);
const status = $('status');

for (const id of ['name', 'notes', 'country', 'toppings', 'gift', 'qty', 'vol']) {
  for (const type of ['focus', 'input', 'change', 'blur', 'click']) {
    $(id).addEventListener(type, () => window.heard.push(`${id}:${type}`));
  }
}

// The combobox: typing opens the list and filters it; choosing an option fills the field.
const fruit = $('fruit');
const list = $('fruit-list');
const open = (on) => {
  list.hidden = !on;
  fruit.setAttribute('aria-expanded', String(on));
};
const filter = () => {
  const q = fruit.value.trim().toLowerCase();
  for (const li of list.children) li.hidden = !!q && !li.textContent.toLowerCase().startsWith(q);
};
fruit.addEventListener('click', () => {
  open(true);
  filter();
});
fruit.addEventListener('input', () => {
  open(true);
  filter();
});
for (const li of list.children) {
  li.addEventListener('click', () => {
    fruit.value = li.textContent;
    open(false);
    status.textContent = `Fruit: ${li.textContent}`;
  });
}

$('dark').addEventListener('click', () => {
  const on = $('dark').getAttribute('aria-checked') !== 'true';
  $('dark').setAttribute('aria-checked', String(on));
});

// React-like controlled input.
const react = $('react');
const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
let tracked = '';
let state = '';
Object.defineProperty(react, 'value', {
  configurable: true,
  get() {
    return proto.get.call(this);
  },
  set(v) {
    tracked = String(v);
    proto.set.call(this, v);
  },
});
const render = () => {
  react.value = state;
  $('react-state').textContent = `state: ${state}`;
};
react.addEventListener('input', () => {
  const now = proto.get.call(react);
  if (now !== tracked) {
    tracked = now;
    state = now;
  }
  render();
});

$('save').addEventListener('click', () => {
  const d = document.createElement('div');
  d.className = 'dialog';
  d.setAttribute('role', 'dialog');
  d.setAttribute('aria-label', 'Saved');
  const p = document.createElement('p');
  p.textContent = `Saved the order for ${$('name').value || 'nobody'}.`;
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = 'Close';
  close.addEventListener('click', () => d.remove());
  d.append(p, close);
  $('order').after(d);
  status.textContent = 'Saved';
});
$('archive').addEventListener('click', () => {
  status.textContent = 'Archived (should never happen)';
});
for (const b of document.querySelectorAll('.remove')) {
  b.addEventListener('click', () => b.closest('tr').remove());
}
$('yes').addEventListener('click', () => $('confirm').close());
window.pageReady = true;
