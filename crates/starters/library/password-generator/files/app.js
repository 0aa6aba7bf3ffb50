// Connects the password generator's logic (password.js) to the page.
const TEXT = {
  levels: {{ strength_levels|tojson }},
  copied: {{ copied_message|tojson }},
  copyFailed: {{ copy_failed_message|tojson }},
  noKinds: {{ no_kinds_message|tojson }},
};
const LEVEL_COLOURS = ['#dc2626', '#ea580c', '#ca8a04', '#16a34a', '#15803d'];

const passwordBox = document.getElementById('password');
const lengthSlider = document.getElementById('length');
const lengthValue = document.getElementById('length-value');
const kindBoxes = document.querySelectorAll('[data-kind]');
const strengthEl = document.getElementById('strength');
const meterFill = document.getElementById('meter-fill');
const copyStatus = document.getElementById('copy-status');
const kindsError = document.getElementById('kinds-error');

function chosenKinds() {
  const kinds = {};
  for (const box of kindBoxes) kinds[box.dataset.kind] = box.checked;
  return kinds;
}

function showStrength(password) {
  const level = strength(password);
  strengthEl.textContent = password ? TEXT.levels[level] || '' : '—';
  meterFill.style.width = password ? (level + 1) * 20 + '%' : '0';
  meterFill.style.background = LEVEL_COLOURS[level];
}

// Make a new password with the chosen length and kinds of characters.
function makePassword() {
  lengthValue.textContent = lengthSlider.value;
  const password = generate(Number(lengthSlider.value), chosenKinds());
  kindsError.textContent = password ? '' : TEXT.noKinds;
  passwordBox.value = password;
  copyStatus.textContent = '';
  showStrength(password);
}

// Copy with the clipboard API; where the browser does not allow it, select the text and
// use the older copy command.
async function copyPassword() {
  if (!passwordBox.value) return;
  try {
    await navigator.clipboard.writeText(passwordBox.value);
    copyStatus.textContent = TEXT.copied;
  } catch {
    passwordBox.select();
    const ok = document.execCommand && document.execCommand('copy');
    copyStatus.textContent = ok ? TEXT.copied : TEXT.copyFailed;
  }
}

lengthSlider.addEventListener('input', makePassword);
for (const box of kindBoxes) box.addEventListener('change', makePassword);
document.getElementById('generate').addEventListener('click', makePassword);
document.getElementById('copy').addEventListener('click', copyPassword);

makePassword();
