import main
from wordcount import count_words, report, top_words, words


def test_words_are_letters_digits_and_apostrophes():
    assert words("Don't stop -- it's 2 o'clock!", ignore_case=False, min_length=1) == ["Don't", "stop", "it's", "2", "o'clock"]


def test_counts_words_in_any_alphabet_and_ignores_extra_spaces():
    assert count_words("  olá   mundo\n\nnovo ", ignore_case=True, min_length=1) == 3
    assert count_words("", ignore_case=True, min_length=1) == 0


def test_case_and_short_words_follow_the_options():
    assert words("The the THE a", ignore_case=True, min_length=2) == ["the", "the", "the"]
    assert words("The the a", ignore_case=False, min_length=1) == ["The", "the", "a"]


def test_most_common_words_first():
    text = "b a b c b a"
    assert top_words(text, 2, ignore_case=True, min_length=1) == [("b", 3), ("a", 2)]
    assert top_words(text, 0, ignore_case=True, min_length=1) == []


def test_report_counts_lines_words_and_characters():
    out = report("one two\nthree\n", 1)
    assert out.splitlines()[:3] == [
        out.splitlines()[0].split(":")[0] + ": 2",
        out.splitlines()[1].split(":")[0] + ": 3",
        out.splitlines()[2].split(":")[0] + ": 14",
    ]


def test_the_command_line_reads_files_and_says_which_cannot_be_read(tmp_path, capsys):
    f = tmp_path / "essay.txt"
    f.write_text("one two two\n", encoding="utf-8")
    assert main.main([str(f), "--top", "1"]) == 0
    assert "two: 2" in capsys.readouterr().out
    assert main.main([str(tmp_path / "missing.txt")]) == 1
    assert "missing.txt" in capsys.readouterr().err
