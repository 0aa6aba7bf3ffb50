// What went wrong, in plain words and the viewer's language. The API answers every refusal
// with a code (`{"error": {code, message}}`, docs/api.md); the page words each code a learner
// can meet for a person, and keeps the server's own message (English, technical) for the
// codes that have no sentence of their own, or as the detail of one that does.

import { el } from './dom.js';

export const ERROR_WORDS = {
  en: {
    'err.offline': 'wright cannot be reached right now. Check your connection and try again in a moment.',
    'err.unauthorized': 'You are signed out. Sign in again to go on.',
    'err.forbidden': 'This is not yours to see or change.',
    'err.not_found': 'That is not here any more. Reload the page to see what is.',
    'err.too_large': 'That is too long to send. Make it shorter and try again.',
    'err.prompt_length': 'Say what to build in a sentence or two: {message}',
    'err.message_length': 'That message is empty or too long. Write something shorter.',
    'err.prompt_secret':
      'Your request holds something that looks like a password or a key. Take it out and send it again: wright never shows secrets to the AI.',
    'err.prompt_credentials':
      'Your request asks to put your own password, key or token into the app. Never share real credentials with the AI: describe the feature instead, like “a login form that checks a password”.',
    'err.prompt_refused': 'This request cannot be built here. {message}',
    'err.moderation_unavailable': 'Requests cannot be checked right now, so none are taken. Try again in a few minutes.',
    'err.model_not_allowed': 'That AI model is not offered here. Pick one from the list.',
    'err.parent_active': 'That build is still working. Wait until it ends, then keep working on it.',
    'err.busy': 'Your last message is still being answered. Wait for it, then send this one.',
    'err.limit': 'You have reached a limit for now. You can try again {wait}.',
    'err.limit.soon': 'You have reached a limit for now. Try again in a moment.',
    'err.stopping': 'wright is restarting. Try again in a minute.',
    'err.store': 'wright cannot save right now. Try again in a minute; nothing was lost.',
    'err.no_files': 'This build has no files to explain yet.',
    'err.other': 'That did not work: {message}',
    'err.wait.minutes': 'in {n} minute(s)',
    'err.wait.seconds': 'in {n} second(s)',
    'err.spending_cap':
      'You have used this month’s AI budget ({spent} of {cap}). It starts again on {date}, or sooner if your teacher or an admin raises it.',
    'err.route.builds': 'You have started {n} builds this hour, the most allowed. You can start another {wait}.',
    'err.route.tasks': 'You have started {n} task runs this hour, the most allowed. You can start another {wait}.',
    'err.route.explanations': 'You have asked {n} questions about code this hour, the most allowed. You can ask again {wait}.',
    'err.route.chat_messages': 'You have sent {n} chat messages this hour, the most allowed. You can write again {wait}.',
    'err.route.assistant_turns': 'You have asked the assistant {n} times this hour, the most allowed. You can ask again {wait}.',
    'err.route.concurrent_runs': 'You already have {n} builds running, the most at once. Start this one when one ends.',
  },
  pt: {
    'err.offline': 'Não foi possível falar com o wright agora. Confira sua conexão e tente de novo daqui a pouco.',
    'err.unauthorized': 'Você saiu da sua conta. Entre de novo para continuar.',
    'err.forbidden': 'Isto não é seu para ver ou mudar.',
    'err.not_found': 'Isto não está mais aqui. Recarregue a página para ver o que há.',
    'err.too_large': 'Isto é longo demais para enviar. Encurte e tente de novo.',
    'err.prompt_length': 'Diga o que construir em uma ou duas frases: {message}',
    'err.message_length': 'A mensagem está vazia ou longa demais. Escreva algo mais curto.',
    'err.prompt_secret':
      'Seu pedido tem algo que parece uma senha ou uma chave. Tire e envie de novo: o wright nunca mostra segredos à IA.',
    'err.prompt_credentials':
      'Seu pedido pede para colocar sua própria senha, chave ou token no app. Nunca compartilhe credenciais reais com a IA: descreva o recurso, como “um formulário de login que confere uma senha”.',
    'err.prompt_refused': 'Este pedido não pode ser construído aqui. {message}',
    'err.moderation_unavailable': 'Os pedidos não podem ser conferidos agora, então nenhum é aceito. Tente de novo em alguns minutos.',
    'err.model_not_allowed': 'Esse modelo de IA não é oferecido aqui. Escolha um da lista.',
    'err.parent_active': 'Essa construção ainda está trabalhando. Espere terminar e continue depois.',
    'err.busy': 'Sua última mensagem ainda está sendo respondida. Espere e então envie esta.',
    'err.limit': 'Você chegou a um limite por enquanto. Pode tentar de novo {wait}.',
    'err.limit.soon': 'Você chegou a um limite por enquanto. Tente de novo daqui a pouco.',
    'err.stopping': 'O wright está reiniciando. Tente de novo em um minuto.',
    'err.store': 'O wright não consegue salvar agora. Tente de novo em um minuto; nada se perdeu.',
    'err.no_files': 'Esta construção ainda não tem arquivos para explicar.',
    'err.other': 'Não deu certo: {message}',
    'err.wait.minutes': 'em {n} minuto(s)',
    'err.wait.seconds': 'em {n} segundo(s)',
    'err.spending_cap':
      'Você usou o orçamento de IA deste mês ({spent} de {cap}). Ele recomeça em {date}, ou antes se seu professor ou um administrador aumentá-lo.',
    'err.route.builds': 'Você começou {n} construções nesta hora, o máximo permitido. Pode começar outra {wait}.',
    'err.route.tasks': 'Você começou {n} execuções de tarefas nesta hora, o máximo permitido. Pode começar outra {wait}.',
    'err.route.explanations': 'Você fez {n} perguntas sobre código nesta hora, o máximo permitido. Pode perguntar de novo {wait}.',
    'err.route.chat_messages': 'Você enviou {n} mensagens no chat nesta hora, o máximo permitido. Pode escrever de novo {wait}.',
    'err.route.assistant_turns': 'Você chamou o assistente {n} vezes nesta hora, o máximo permitido. Pode chamar de novo {wait}.',
    'err.route.concurrent_runs': 'Você já tem {n} construções em andamento, o máximo ao mesmo tempo. Comece esta quando uma terminar.',
  },
};

/// Codes whose sentence says all a learner needs (the server's message is only its detail).
const WORDED = {
  unauthorized: 'err.unauthorized',
  login_link: 'err.unauthorized',
  forbidden: 'err.forbidden',
  not_found: 'err.not_found',
  gone: 'err.not_found',
  too_large: 'err.too_large',
  message_length: 'err.message_length',
  prompt_secret: 'err.prompt_secret',
  prompt_credentials: 'err.prompt_credentials',
  moderation_unavailable: 'err.moderation_unavailable',
  model_not_allowed: 'err.model_not_allowed',
  parent_active: 'err.parent_active',
  shutting_down: 'err.stopping',
  stopping: 'err.stopping',
  store: 'err.store',
  // The words the CLI and the narration use too (words.js).
  model_unavailable: 'model.unavailable',
  no_files: 'err.no_files',
};

/// When a refused request may be sent again, in words: `Retry-After` seconds (or null).
export function waitWords(seconds, t) {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s <= 0) return null;
  return s >= 90 ? t('err.wait.minutes', { n: Math.ceil(s / 60) }) : t('err.wait.seconds', { n: Math.ceil(s) });
}

/// `err` (thrown by `api`, with `status`, `code`, `message` and `retryAfter`) in plain words:
/// `{text, detail}`, where `detail` is the server's own message when the text does not carry it.
export function plainError(err, t) {
  const message = err?.message || String(err);
  if (!err?.status) return { text: t('err.offline'), detail: message };
  const key = WORDED[err.code];
  if (key) return { text: t(key), detail: message };
  switch (err.code) {
    case 'prompt_length':
      return { text: t('err.prompt_length', { message }), detail: null };
    case 'prompt_refused':
      return { text: t('err.prompt_refused', { message }), detail: null };
    default:
      break;
  }
  if (err.code === 'spending_cap' && err.details) {
    const d = err.details;
    const money = (v) => `US$ ${Number(v).toFixed(2)}`;
    const date = String(d.resets_at || '').slice(0, 10);
    return { text: t('err.spending_cap', { spent: money(d.spent_usd), cap: money(d.cap_usd), date }), detail: message };
  }
  if (err.status === 429) {
    // A busy turn (one message at a time) or a limit: when it frees, and which one, as detail.
    if (/still being answered/.test(message)) return { text: t('err.busy'), detail: null };
    const wait = waitWords(err.retryAfter, t);
    const limit = err.details?.limit;
    if (limit && `err.route.${limit.route}` in ERROR_WORDS.en) {
      const n = limit.route === 'concurrent_runs' ? limit.limit : limit.used;
      return { text: t(`err.route.${limit.route}`, { n, wait: wait || t('err.wait.seconds', { n: 1 }) }), detail: message };
    }
    return { text: wait ? t('err.limit', { wait }) : t('err.limit.soon'), detail: message };
  }
  if (err.status === 503) return { text: t('err.stopping'), detail: message };
  if (err.status >= 500) return { text: t('err.store'), detail: message };
  return { text: t('err.other', { message }), detail: null };
}

/// Put `err` in `box` in plain words, the server's own message folded away under it.
export function showError(box, err, t) {
  const { text, detail } = plainError(err, t);
  box.replaceChildren(document.createTextNode(text));
  if (detail && detail !== text) {
    const more = el('details', { class: 'detail' });
    more.append(el('summary', {}, t('error.details')), el('pre', {}, detail));
    box.append(more);
  }
}
