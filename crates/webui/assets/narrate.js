// wright's own words, in the viewer's language, made from the events' typed fields. The model's
// own narration (status messages) is shown as it wrote it. Everything here returns plain
// strings: the page puts them in with textContent, never as HTML. Words the CLI and the server
// say too (queue notices, restarts) come from the shared tables in words.js.

import { WORDS } from './words.js';

const STRINGS = {
  en: {
    'signin.title': 'Sign in',
    'nav.build': 'New build',
    'nav.admin': 'Dashboard',
    'dash.title': 'How builds are going',
    'dash.loading': 'Loading…',
    'dash.builds': 'builds finished',
    'dash.success': 'published',
    'dash.first_try': 'right the first time',
    'dash.p50': 'median time',
    'dash.p95': '95th percentile time',
    'dash.cost': 'model cost',
    'dash.trend': 'Share of builds published, per template and day (last 30 days)',
    'dash.fixes': 'Builds by number of fix attempts',
    'dash.cost_day': 'Model cost per day (USD)',
    'dash.tokens_day': 'Tokens per day',
    'dash.errors': 'Problems found most often',
    'dash.notes': 'Lessons, best first',
    'dash.lesson': 'Lesson',
    'dash.confidence': 'Confidence',
    'dash.help_fail': 'Helped / failed',
    'dash.status': 'Status',
    'dash.deprecate': 'Deprecate',
    'dash.restore': 'Restore',
    'dash.edit': 'Edit',
    'dash.save': 'Save',
    'dash.maintenance': 'Maintenance',
    'dash.job': 'Job',
    'dash.last_run': 'Last run',
    'dash.outcome': 'Outcome',
    'dash.detail': 'Detail',
    'dash.running': 'running',
    'dash.ok': 'ok',
    'dash.failed': 'failed',
    'dash.workers': 'Workers',
    'dash.worker': 'Name',
    'dash.host': 'Host',
    'dash.slots': 'Slots',
    'dash.busy': 'Busy',
    'dash.last_seen': 'Last seen',
    'dash.alive': 'Alive',
    'dash.yes': 'yes',
    'dash.no': 'no',
    'dash.none': 'Nothing yet.',
    'signin.body': 'Open the one-time login link that wright serve printed when it started, or ask an admin for a new one (wright users add NAME).',
    'ask.label': 'What should wright build?',
    'ask.try': 'Try:',
    'ask.assistant': 'Put an assistant in the app',
    'ask.example': 'e.g. a countdown timer with start and reset buttons',
    'ask.template': 'Kind',
    'ask.lang': 'Narration in',
    'template.auto': 'Let wright choose',
    'template.static': 'A page',
    'template.interactive': 'An interactive app',
    'template.fullstack': 'An app with a server',
    'template.react': 'A React app (TypeScript, Tailwind)',
    'view.cancel': 'Cancel',
    'view.explain': 'Explain the code',
    'view.explaining': 'Explaining…',
    'view.explanation': 'What the code does',
    'more.label': 'Keep working on it: what should change?',
    'more.go': 'Keep working',
    'view.download': 'Download .zip',
    'view.app': 'Open the app: {path}',
    'view.narration': 'Narration',
    'view.tests': 'Tests',
    'view.files': 'Files',
    'view.code': 'Code',
    'view.preview': 'Preview',
    'view.terminal': 'Terminal',
    'history.title': 'Your builds',
    'history.what': 'What',
    'history.status': 'Status',
    'history.kind': 'Kind',
    'history.fixes': 'Fixes',
    'history.time': 'Time',
    'history.cost': 'Cost',
    'history.none': 'No builds yet: describe something above.',
    'conn.live': 'Live',
    'conn.reconnecting': 'Reconnecting…',
    'conn.done': '',
    'phase.PLANNING': 'Planning',
    'phase.GENERATING': 'Writing the code',
    'phase.TRANSPILING': 'Building the page and checking types',
    'phase.VERIFYING': 'Checking that it works',
    'phase.FIXING': 'Fixing a problem',
    'phase.LEARNING': 'Learning from the fix',
    'phase.PUBLISHED': 'Done',
    'phase.FAILED': 'Could not finish',
    'phase.queued': 'Waiting for a free worker',
    'fix.attempt': 'Fix attempt {n}',
    'line.phase.fixing': 'Fix attempt {n}: fixing what broke.',
    'line.wrote': 'Wrote {path}',
    'line.created': 'Created {path}',
    'line.deleted': 'Deleted {path}',
    'line.command': 'Running {command}',
    'line.tests': 'Tests: {passed} passed, {failed} failed of {total}.',
    'line.problem': 'Problem found: {error}',
    'line.problem.at': 'Problem found in {file}:{line}: {error}',
    'line.fixed': 'Fixed!',
    'line.learned': 'Learned: {lesson}',
    'line.browser.ok': 'In the browser: no errors after {actions} click(s).',
    'line.browser.bad': 'In the browser: {n} problem(s).',
    'line.browser.skipped': 'Browser check not run: {reason}',
    'line.done': 'Finished: it works. {files} file(s), {fixes} fix attempt(s), {secs} s.',
    'line.done.unchecked': 'Finished: its checks pass, but the page was not opened in a browser ({reason}), so errors a visitor would meet may remain. {files} file(s), {fixes} fix attempt(s), {secs} s.',
    'line.failed': 'Stopped without a working result after {fixes} fix attempt(s).',
    'line.error': 'Error: {message}',
    'toast.restarted': 'Running again after an interruption',
    'toast.problem': 'Problem found',
    'toast.fixed': 'Fixed!',
    'toast.learned': 'Learned: {lesson}',
    'meter': '{tokens} tokens · ${cost}',
    'status.queued': 'queued',
    'status.running': 'running',
    'status.published': 'published',
    'status.failed': 'failed',
    'err.prompt': 'Say what to build in at least 10 characters.',
    'nav.chat': 'Chat',
    'chat.conversations': 'Conversations',
    'chat.new': 'New conversation',
    'chat.clear': 'Clear',
    'chat.send': 'Send',
    'chat.placeholder': 'Ask about what you are learning, e.g. “make me a diagram and a quiz about photosynthesis”',
    'chat.hint': 'Enter sends; Shift+Enter starts a new line.',
    'chat.empty': 'Ask a question to start: wright can draw diagrams, write quizzes and flashcards, show code and find videos.',
    'chat.none': 'No conversations yet.',
    'chat.untitled': 'New conversation',
    'chat.you': 'You',
    'chat.tutor': 'wright',
    'chat.progress': 'What wright is doing',
    'chat.thinking': 'Thinking…',
    'chat.writing': 'Writing the answer…',
    'chat.resuming': 'Picking the answer up where it was…',
    'chat.reconnecting': 'Reconnecting…',
    'chat.stream_lost': 'The connection was lost; the answer is still being written on the server. Reload to see it.',
    'chat.cleared': 'Conversation cleared ({n} messages).',
    'chat.error': 'Error: {message}',
    'tool.diagram': 'Drawing a diagram…',
    'tool.quiz': 'Writing a quiz…',
    'tool.flashcards': 'Making flashcards…',
    'tool.flashcard_update': 'Adding a card to your deck…',
    'tool.video_search': 'Looking for videos…',
    'tool.code': 'Writing a code example…',
    'tool.other': 'Using {tool}…',
    'tool.failed': '{tool} could not be made',
    'toolname.diagram': 'diagram',
    'toolname.quiz': 'quiz',
    'toolname.flashcards': 'flashcards',
    'toolname.flashcard_update': 'deck update',
    'toolname.video_search': 'video search',
    'toolname.code': 'code example',
    'toolname.reply': 'the reply',
    'part.diagram.drawing': 'Drawing the diagram…',
    'part.diagram.alt': 'Diagram: {title}',
    'part.diagram.source': 'The diagram could not be drawn here ({reason}). Its Mermaid source:',
    'part.diagram.missing': 'the diagram renderer is not installed on this server',
    'part.diagram.failed': 'Mermaid could not read it',
    'part.error': '{tool} did not work: {message}',
    'part.unknown': 'Content of a kind this page does not show yet ({type}):',
    'quiz.check': 'Check answers',
    'quiz.again': 'Try again',
    'quiz.wait': 'You can check your answers once the reply has finished.',
    'quiz.answer_all': 'Choose an answer for every question first.',
    'quiz.score': 'Score: {score} of {total}',
    'quiz.right': '✓ Correct.',
    'quiz.wrong': '✗ The answer is: {answer}.',
    'cards.deck': 'Flashcards',
    'cards.title': '{n} flashcard(s) added to your deck',
    'cards.count': '{n} card(s) in your deck, {due} due now.',
    'cards.empty': 'No cards yet: ask for flashcards on a topic.',
    'cards.review': 'Review due cards ({n})',
    'cards.due': 'Cards due for review',
    'cards.due_n': '{n} card(s) due',
    'cards.none_due': 'No cards are due.',
    'cards.close': 'Close',
    'cards.front': 'Question',
    'cards.back': 'Answer',
    'cards.show': 'Show answer',
    'cards.hide': 'Show question',
    'cards.rate': 'How well did you remember it?',
    'cards.again': 'Again',
    'cards.hard': 'Hard',
    'cards.good': 'Good',
    'cards.easy': 'Easy',
    'cards.next': 'Next review: {date}',
    'videos.title': 'Videos: {query}',
    'code.copy': 'Copy',
    'code.copied': 'Copied',
    'feedback.up': 'Helpful answer',
    'feedback.down': 'Unhelpful answer',
  },
  pt: {
    'signin.title': 'Entrar',
    'nav.build': 'Nova construção',
    'nav.admin': 'Painel',
    'dash.title': 'Como as construções estão indo',
    'dash.loading': 'Carregando…',
    'dash.builds': 'construções terminadas',
    'dash.success': 'publicadas',
    'dash.first_try': 'certas de primeira',
    'dash.p50': 'tempo mediano',
    'dash.p95': 'tempo no percentil 95',
    'dash.cost': 'custo do modelo',
    'dash.trend': 'Parte das construções publicadas, por modelo de projeto e dia (últimos 30 dias)',
    'dash.fixes': 'Construções por número de tentativas de correção',
    'dash.cost_day': 'Custo do modelo por dia (USD)',
    'dash.tokens_day': 'Tokens por dia',
    'dash.errors': 'Problemas mais encontrados',
    'dash.notes': 'Lições, as melhores primeiro',
    'dash.lesson': 'Lição',
    'dash.confidence': 'Confiança',
    'dash.help_fail': 'Ajudou / falhou',
    'dash.status': 'Situação',
    'dash.deprecate': 'Desativar',
    'dash.restore': 'Restaurar',
    'dash.edit': 'Editar',
    'dash.save': 'Salvar',
    'dash.maintenance': 'Manutenção',
    'dash.job': 'Tarefa',
    'dash.last_run': 'Última execução',
    'dash.outcome': 'Resultado',
    'dash.detail': 'Detalhe',
    'dash.running': 'em execução',
    'dash.ok': 'ok',
    'dash.failed': 'falhou',
    'dash.workers': 'Servidores',
    'dash.worker': 'Nome',
    'dash.host': 'Máquina',
    'dash.slots': 'Vagas',
    'dash.busy': 'Ocupadas',
    'dash.last_seen': 'Visto por último',
    'dash.alive': 'Ativo',
    'dash.yes': 'sim',
    'dash.no': 'não',
    'dash.none': 'Nada ainda.',
    'signin.body': 'Abra o link de acesso único que o wright serve mostrou ao iniciar, ou peça um novo a um administrador (wright users add NOME).',
    'ask.label': 'O que o wright deve construir?',
    'ask.try': 'Experimente:',
    'ask.assistant': 'Colocar um assistente no app',
    'ask.example': 'ex.: um cronômetro regressivo com botões de iniciar e zerar',
    'ask.template': 'Tipo',
    'ask.lang': 'Narração em',
    'template.auto': 'O wright escolhe',
    'template.static': 'Uma página',
    'template.interactive': 'Um app interativo',
    'template.fullstack': 'Um app com servidor',
    'template.react': 'Um app React (TypeScript, Tailwind)',
    'view.cancel': 'Cancelar',
    'view.explain': 'Explicar o código',
    'view.explaining': 'Explicando…',
    'view.explanation': 'O que o código faz',
    'more.label': 'Continuar: o que deve mudar?',
    'more.go': 'Continuar',
    'view.download': 'Baixar .zip',
    'view.app': 'Abrir o app: {path}',
    'view.narration': 'Narração',
    'view.tests': 'Testes',
    'view.files': 'Arquivos',
    'view.code': 'Código',
    'view.preview': 'Visualização',
    'view.terminal': 'Terminal',
    'history.title': 'Suas construções',
    'history.what': 'O quê',
    'history.status': 'Situação',
    'history.kind': 'Tipo',
    'history.fixes': 'Correções',
    'history.time': 'Tempo',
    'history.cost': 'Custo',
    'history.none': 'Nenhuma construção ainda: descreva algo acima.',
    'conn.live': 'Ao vivo',
    'conn.reconnecting': 'Reconectando…',
    'conn.done': '',
    'phase.PLANNING': 'Planejando',
    'phase.GENERATING': 'Escrevendo o código',
    'phase.TRANSPILING': 'Montando a página e conferindo os tipos',
    'phase.VERIFYING': 'Verificando se funciona',
    'phase.FIXING': 'Corrigindo um problema',
    'phase.LEARNING': 'Aprendendo com a correção',
    'phase.PUBLISHED': 'Pronto',
    'phase.FAILED': 'Não foi possível terminar',
    'phase.queued': 'Esperando um trabalhador livre',
    'fix.attempt': 'Tentativa de correção {n}',
    'line.phase.fixing': 'Tentativa de correção {n}: corrigindo o que quebrou.',
    'line.wrote': 'Escreveu {path}',
    'line.created': 'Criou {path}',
    'line.deleted': 'Apagou {path}',
    'line.command': 'Executando {command}',
    'line.tests': 'Testes: {passed} passaram, {failed} falharam de {total}.',
    'line.problem': 'Problema encontrado: {error}',
    'line.problem.at': 'Problema encontrado em {file}:{line}: {error}',
    'line.fixed': 'Corrigido!',
    'line.learned': 'Aprendi: {lesson}',
    'line.browser.ok': 'No navegador: nenhum erro após {actions} clique(s).',
    'line.browser.bad': 'No navegador: {n} problema(s).',
    'line.browser.skipped': 'Verificação no navegador não executada: {reason}',
    'line.done': 'Terminado: funciona. {files} arquivo(s), {fixes} tentativa(s) de correção, {secs} s.',
    'line.done.unchecked': 'Terminado: as verificações passam, mas a página não foi aberta num navegador ({reason}); erros que um visitante veria podem continuar. {files} arquivo(s), {fixes} tentativa(s) de correção, {secs} s.',
    'line.failed': 'Parou sem um resultado que funcione após {fixes} tentativa(s) de correção.',
    'line.error': 'Erro: {message}',
    'toast.restarted': 'Rodando de novo após uma interrupção',
    'toast.problem': 'Problema encontrado',
    'toast.fixed': 'Corrigido!',
    'toast.learned': 'Aprendi: {lesson}',
    'meter': '{tokens} tokens · US$ {cost}',
    'status.queued': 'na fila',
    'status.running': 'em andamento',
    'status.published': 'publicado',
    'status.failed': 'falhou',
    'err.prompt': 'Diga o que construir em pelo menos 10 caracteres.',
    'nav.chat': 'Conversa',
    'chat.conversations': 'Conversas',
    'chat.new': 'Nova conversa',
    'chat.clear': 'Limpar',
    'chat.send': 'Enviar',
    'chat.placeholder': 'Pergunte sobre o que está aprendendo, ex.: “faça um diagrama e um quiz sobre fotossíntese”',
    'chat.hint': 'Enter envia; Shift+Enter começa uma nova linha.',
    'chat.empty': 'Faça uma pergunta para começar: o wright desenha diagramas, cria quizzes e flashcards, mostra código e encontra vídeos.',
    'chat.none': 'Nenhuma conversa ainda.',
    'chat.untitled': 'Nova conversa',
    'chat.you': 'Você',
    'chat.tutor': 'wright',
    'chat.progress': 'O que o wright está fazendo',
    'chat.thinking': 'Pensando…',
    'chat.writing': 'Escrevendo a resposta…',
    'chat.resuming': 'Retomando a resposta de onde parou…',
    'chat.reconnecting': 'Reconectando…',
    'chat.stream_lost': 'A conexão caiu; a resposta continua sendo escrita no servidor. Recarregue para vê-la.',
    'chat.cleared': 'Conversa limpa ({n} mensagens).',
    'chat.error': 'Erro: {message}',
    'tool.diagram': 'Desenhando um diagrama…',
    'tool.quiz': 'Criando um quiz…',
    'tool.flashcards': 'Criando flashcards…',
    'tool.flashcard_update': 'Adicionando um cartão ao seu baralho…',
    'tool.video_search': 'Procurando vídeos…',
    'tool.code': 'Escrevendo um exemplo de código…',
    'tool.other': 'Usando {tool}…',
    'tool.failed': 'não foi possível fazer {tool}',
    'toolname.diagram': 'o diagrama',
    'toolname.quiz': 'o quiz',
    'toolname.flashcards': 'os flashcards',
    'toolname.flashcard_update': 'a atualização do baralho',
    'toolname.video_search': 'a busca de vídeos',
    'toolname.code': 'o exemplo de código',
    'toolname.reply': 'a resposta',
    'part.diagram.drawing': 'Desenhando o diagrama…',
    'part.diagram.alt': 'Diagrama: {title}',
    'part.diagram.source': 'Não foi possível desenhar o diagrama aqui ({reason}). O código Mermaid dele:',
    'part.diagram.missing': 'o programa que desenha diagramas não está instalado neste servidor',
    'part.diagram.failed': 'o Mermaid não conseguiu lê-lo',
    'part.error': '{tool} não funcionou: {message}',
    'part.unknown': 'Conteúdo de um tipo que esta página ainda não mostra ({type}):',
    'quiz.check': 'Verificar respostas',
    'quiz.again': 'Tentar de novo',
    'quiz.wait': 'Você pode verificar as respostas quando a resposta terminar.',
    'quiz.answer_all': 'Escolha uma resposta para cada pergunta primeiro.',
    'quiz.score': 'Pontuação: {score} de {total}',
    'quiz.right': '✓ Correto.',
    'quiz.wrong': '✗ A resposta é: {answer}.',
    'cards.deck': 'Flashcards',
    'cards.title': '{n} flashcard(s) adicionado(s) ao seu baralho',
    'cards.count': '{n} cartão(ões) no seu baralho, {due} para revisar agora.',
    'cards.empty': 'Nenhum cartão ainda: peça flashcards sobre um assunto.',
    'cards.review': 'Revisar cartões pendentes ({n})',
    'cards.due': 'Cartões para revisar',
    'cards.due_n': '{n} cartão(ões) para revisar',
    'cards.none_due': 'Nenhum cartão para revisar.',
    'cards.close': 'Fechar',
    'cards.front': 'Pergunta',
    'cards.back': 'Resposta',
    'cards.show': 'Mostrar resposta',
    'cards.hide': 'Mostrar pergunta',
    'cards.rate': 'Quão bem você lembrou?',
    'cards.again': 'De novo',
    'cards.hard': 'Difícil',
    'cards.good': 'Bom',
    'cards.easy': 'Fácil',
    'cards.next': 'Próxima revisão: {date}',
    'videos.title': 'Vídeos: {query}',
    'code.copy': 'Copiar',
    'code.copied': 'Copiado',
    'feedback.up': 'Resposta útil',
    'feedback.down': 'Resposta pouco útil',
  },
};

/// The viewer's language: Portuguese when the browser prefers it, else English.
export function viewerLang(languages = navigator.languages || [navigator.language || 'en']) {
  for (const l of languages) {
    const code = String(l).toLowerCase().slice(0, 2);
    if (code in STRINGS) return code;
  }
  return 'en';
}

/// A translator: t('key', {name: value}) fills {name} in the viewer's language.
export function translator(lang) {
  const table = { ...(WORDS[lang] || WORDS.en), ...(STRINGS[lang] || STRINGS.en) };
  const fallback = { ...WORDS.en, ...STRINGS.en };
  return (key, vars = {}) => {
    const text = table[key] ?? fallback[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
  };
}

/// The narration line an event adds, if any: {text, tone} (tone: info, success, warning,
/// error, phase, command), plus `toast` for the moments worth a pop-up.
export function describe(e, t) {
  switch (e.type) {
    case 'status':
      return { text: e.message, tone: e.level || 'info' };
    case 'queued':
      return { text: e.position > 0 ? t('queue.behind', { n: e.position }) : t('queue.next'), tone: 'info' };
    case 'started':
      return { text: t('queue.started'), tone: 'info' };
    case 'phase':
      if (e.phase === 'FIXING') return { text: t('line.phase.fixing', { n: e.iteration }), tone: 'phase' };
      return { text: t(`phase.${e.phase}`), tone: 'phase' };
    case 'file_written':
      return { text: t(e.created ? 'line.created' : 'line.wrote', { path: e.path }), tone: 'file' };
    case 'file_deleted':
      return { text: t('line.deleted', { path: e.path }), tone: 'file' };
    case 'command_started':
      return { text: t('line.command', { command: commandLine(e) }), tone: 'command' };
    case 'tests_finished':
      return { text: t('line.tests', e), tone: e.failed > 0 ? 'warning' : 'success' };
    case 'error_detected': {
      const error = firstLine(e.error);
      const text = e.file ? t('line.problem.at', { file: e.file, line: e.line ?? '?', error }) : t('line.problem', { error });
      return { text, tone: 'error', toast: t('toast.problem') };
    }
    case 'error_fixed':
      return { text: t('line.fixed'), tone: 'success', toast: t('toast.fixed') };
    case 'learning':
      return { text: t('line.learned', { lesson: e.lesson }), tone: 'success', toast: t('toast.learned', { lesson: e.lesson }) };
    case 'browser_check': {
      if (e.outcome !== 'checked') return { text: t('line.browser.skipped', { reason: e.reason || e.outcome }), tone: 'info' };
      const n = e.console_errors + e.exceptions + e.failed_requests + e.blocked_requests + (e.blank ? 1 : 0);
      return n === 0
        ? { text: t('line.browser.ok', { actions: e.actions }), tone: 'success' }
        : { text: t('line.browser.bad', { n }), tone: 'warning' };
    }
    case 'complete': {
      const figures = { files: e.files.length, fixes: e.fix_attempts, secs: (e.duration_ms / 1000).toFixed(1) };
      if (!e.success) return { text: t('line.failed', { fixes: e.fix_attempts }), tone: 'error' };
      // Published on its other checks, but nobody opened the page: never say "it works".
      if (e.browser_checked === false && e.browser_reason) {
        return { text: t('line.done.unchecked', { ...figures, reason: e.browser_reason }), tone: 'warning' };
      }
      return { text: t('line.done', figures), tone: 'success' };
    }
    case 'error':
      return { text: t('line.error', { message: e.message }), tone: 'error' };
    case 'restarted': {
      const key = e.reason === 'shutdown' ? 'restarted.shutdown' : 'restarted.worker_lost';
      return { text: t(key, { attempt: e.attempt }), tone: 'warning', toast: t('toast.restarted') };
    }
    default:
      return null;
  }
}

export function commandLine(e) {
  const args = Array.isArray(e.args) ? e.args : [];
  return [e.command, ...args].join(' ');
}

function firstLine(text) {
  const line = String(text || '').split('\n').find((l) => l.trim()) || '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
