// Connects the quiz logic (quiz.js) to the page.
const QUESTIONS = cleanQuestions({{ questions|tojson }});
const LANGUAGE = {{ language|tojson }};

const TEXT = {
  en: {
    progress: (n, total) => 'Question ' + n + ' of ' + total,
    score: (s) => 'Score: ' + s,
    right: 'Correct! 🎉',
    wrong: (a) => 'Not quite. The answer is: ' + a,
    next: 'Next question', finish: 'See my score',
    final: (s, total) => s + ' / ' + total,
    perfect: 'Perfect score! You know your stuff.',
    good: 'Well done! Nearly all of them.',
    ok: 'Not bad! Try again to beat your score.',
    low: 'Keep practising, you will get there!',
    none: 'There are no questions yet.',
  },
  pt: {
    progress: (n, total) => 'Pergunta ' + n + ' de ' + total,
    score: (s) => 'Pontos: ' + s,
    right: 'Certo! 🎉',
    wrong: (a) => 'Quase! A resposta certa é: ' + a,
    next: 'Próxima pergunta', finish: 'Ver minha pontuação',
    final: (s, total) => s + ' / ' + total,
    perfect: 'Pontuação perfeita! Você manda bem.',
    good: 'Muito bem! Acertou quase tudo.',
    ok: 'Nada mal! Tente de novo para melhorar.',
    low: 'Continue praticando, você chega lá!',
    none: 'Ainda não há perguntas.',
  },
}[LANGUAGE === 'pt' ? 'pt' : 'en'];

let state = newGame();

const play = document.getElementById('play');
const end = document.getElementById('end');
const progressText = document.getElementById('progress-text');
const scoreText = document.getElementById('score-text');
const progressBar = document.getElementById('progress-bar');
const questionEl = document.getElementById('question');
const choicesEl = document.getElementById('choices');
const feedback = document.getElementById('feedback');
const nextButton = document.getElementById('next');

function render() {
  const total = QUESTIONS.length;
  if (total === 0) {
    questionEl.textContent = TEXT.none;
    return;
  }
  play.hidden = state.finished;
  end.hidden = !state.finished;
  if (state.finished) {
    const p = percent(state.score, total);
    document.getElementById('final-score').textContent = TEXT.final(state.score, total);
    document.getElementById('final-message').textContent =
      p === 100 ? TEXT.perfect : p >= 70 ? TEXT.good : p >= 40 ? TEXT.ok : TEXT.low;
    return;
  }

  const question = currentQuestion(state, QUESTIONS);
  progressText.textContent = TEXT.progress(state.current + 1, total);
  scoreText.textContent = TEXT.score(state.score);
  progressBar.style.width = ((state.current + (state.answered ? 1 : 0)) / total) * 100 + '%';
  questionEl.textContent = question.question;

  choicesEl.innerHTML = '';
  question.choices.forEach((choice, index) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'choice';
    b.textContent = choice;
    if (state.answered) {
      b.disabled = true;
      if (index === question.answer) b.classList.add('right');
      else if (index === state.lastChoice) b.classList.add('wrong');
    }
    b.addEventListener('click', () => { state = answer(state, QUESTIONS, index); render(); });
    choicesEl.append(b);
  });

  if (state.answered) {
    const right = isCorrect(question, state.lastChoice);
    feedback.textContent = right ? TEXT.right : TEXT.wrong(question.choices[question.answer]);
    feedback.className = 'feedback ' + (right ? 'good' : 'bad');
    nextButton.textContent = isLast(state, QUESTIONS) ? TEXT.finish : TEXT.next;
    nextButton.hidden = false;
    nextButton.focus();
  } else {
    feedback.textContent = '';
    feedback.className = 'feedback';
    nextButton.hidden = true;
  }
}

nextButton.addEventListener('click', () => { state = next(state, QUESTIONS); render(); });
document.getElementById('restart').addEventListener('click', () => { state = newGame(); render(); });

render();
