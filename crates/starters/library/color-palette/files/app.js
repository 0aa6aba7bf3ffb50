// Connects the palette's logic (palette.js) to the page.

const START_COLOR = {{ start_color|tojson }};
const STEPS = {{ steps|tojson }};
const MAX_SAVED = {{ max_saved|tojson }};
const LABELS = {
  darker: {{ darker_label|tojson }},
  base: {{ base_label|tojson }},
  lighter: {{ lighter_label|tojson }},
  complement: {{ complement_label|tojson }},
};
const COPY_HINT = {{ copy_hint|tojson }};
const COPIED_MESSAGE = {{ copied_message|tojson }};
const COPY_FALLBACK = {{ copy_fallback|tojson }};
const INVALID_MESSAGE = {{ invalid_message|tojson }};
const DELETE_LABEL = {{ delete_label|tojson }};
const STORAGE_KEY = 'color-palette.saved';

const picker = document.getElementById('picker');
const codeBox = document.getElementById('code');
const saveButton = document.getElementById('save');
const message = document.getElementById('message');
const swatchBox = document.getElementById('swatches');
const savedList = document.getElementById('saved');
const emptyText = document.getElementById('empty');
const logo = document.getElementById('logo');

let baseColor = normalizeHex(START_COLOR) || '#3a7bd5';
let currentPalette = [];
let saved = loadSaved();

// Saved palettes live in the browser's localStorage, so they are still there tomorrow.
function loadSaved() {
  try {
    return parseSaved(localStorage.getItem(STORAGE_KEY));
  } catch (e) {
    return [];
  }
}

function storeSaved() {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(saved));
  } catch (e) {
    // Storage can be switched off; the palettes then last until the page closes.
  }
}

function showMessage(text, isError) {
  message.textContent = text;
  message.classList.toggle('error', Boolean(isError));
}

function swatchName(swatch) {
  const label = LABELS[swatch.kind];
  return swatch.level > 0 ? label + ' ' + swatch.level : label;
}

// Copy a colour code; when the browser does not allow it, show the code to copy by hand.
function copyColor(hex) {
  const fallback = function () {
    showMessage(COPY_FALLBACK + ' ' + hex);
  };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(hex).then(function () {
      showMessage(COPIED_MESSAGE + ' ' + hex);
    }, fallback);
  } else {
    fallback();
  }
}

function drawPalette() {
  currentPalette = generatePalette(baseColor, STEPS);
  swatchBox.textContent = '';
  currentPalette.forEach(function (swatch) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'swatch swatch-' + swatch.kind;
    button.style.backgroundColor = swatch.hex;
    button.style.color = textColorFor(swatch.hex);
    button.title = swatch.hex;

    const name = document.createElement('span');
    name.className = 'swatch-name';
    name.textContent = swatchName(swatch);
    const code = document.createElement('span');
    code.className = 'swatch-code';
    code.textContent = swatch.hex;

    button.append(name, code);
    button.addEventListener('click', function () {
      copyColor(swatch.hex);
    });
    swatchBox.appendChild(button);
  });
  logo.style.background = 'linear-gradient(135deg, ' + baseColor + ' 50%, ' + complementary(baseColor) + ' 50%)';
}

function drawSaved() {
  savedList.textContent = '';
  emptyText.hidden = saved.length > 0;
  saved.forEach(function (palette) {
    const item = document.createElement('li');
    item.className = 'saved-item';

    const load = document.createElement('button');
    load.type = 'button';
    load.className = 'saved-load';
    load.setAttribute('aria-label', palette.base);
    const strip = document.createElement('span');
    strip.className = 'strip';
    palette.colors.forEach(function (hex) {
      const chip = document.createElement('span');
      chip.style.backgroundColor = hex;
      strip.appendChild(chip);
    });
    const code = document.createElement('span');
    code.className = 'saved-code';
    code.textContent = palette.base;
    load.append(strip, code);
    load.addEventListener('click', function () {
      setBase(palette.base);
    });

    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'saved-delete';
    remove.textContent = DELETE_LABEL;
    remove.addEventListener('click', function () {
      saved = removeSaved(saved, palette.base);
      storeSaved();
      drawSaved();
    });

    item.append(load, remove);
    savedList.appendChild(item);
  });
}

// Use a new base colour everywhere on the page.
function setBase(hex) {
  const clean = normalizeHex(hex);
  if (!clean) return;
  baseColor = clean;
  picker.value = clean;
  codeBox.value = clean;
  codeBox.classList.remove('invalid');
  drawPalette();
}

picker.addEventListener('input', function () {
  setBase(picker.value);
  showMessage(COPY_HINT);
});

// While typing, a full six-digit code updates the palette straight away.
codeBox.addEventListener('input', function () {
  const text = codeBox.value.trim();
  if (/^#?[0-9a-fA-F]{6}$/.test(text)) {
    setBase(text);
    showMessage(COPY_HINT);
  }
});

// When the typing is done (Enter or leaving the box), check the code.
codeBox.addEventListener('change', function () {
  const clean = normalizeHex(codeBox.value);
  if (clean) {
    setBase(clean);
    showMessage(COPY_HINT);
  } else {
    codeBox.classList.add('invalid');
    showMessage(INVALID_MESSAGE, true);
  }
});

saveButton.addEventListener('click', function () {
  saved = addSaved(saved, { base: baseColor, colors: currentPalette.map(function (s) { return s.hex; }) }, MAX_SAVED);
  storeSaved();
  drawSaved();
});

setBase(baseColor);
drawSaved();
