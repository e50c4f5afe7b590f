"""Load progress: a live line on a terminal, silence when stderr is not one."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

from papercode.cli.progress import LoadProgress, MaterializeProgress
from papercode.corpus.stages import Corpus
from papercode.settings import bundled_records_dir


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_counts_rate_and_eta() -> None:
    screen = Terminal()
    progress = LoadProgress(stream=screen, interval=0)
    progress(1, 4, 100)
    progress(4, 4, 400)
    text = screen.getvalue()
    assert re.search(r"1/4 files, 100 records, [\d,]+ records/s, ETA \d+", text)
    assert "4/4 files, 400 records" in text and "done" in text
    assert text.endswith("\n")


def test_eta_is_the_remaining_share_of_elapsed_time() -> None:
    line = LoadProgress(stream=Terminal()).line(done=25, total=100, records=2_500, elapsed=10.0)
    assert "250 records/s" in line and "ETA 30s" in line


def test_not_a_terminal_stays_quiet() -> None:
    pipe = io.StringIO()
    Corpus.load([Path(bundled_records_dir())], progress=LoadProgress(stream=pipe, interval=0))
    assert pipe.getvalue() == ""


def test_loader_reports_every_file() -> None:
    screen = Terminal()
    Corpus.load([Path(bundled_records_dir())], progress=LoadProgress(stream=screen, interval=0))
    assert "2/2 files, 2 records" in screen.getvalue()


def test_materialize_progress_counts_samples_and_verified() -> None:
    screen = Terminal()
    progress = MaterializeProgress(stream=screen, interval=0)
    progress(3, 10, Counter(verified=2, hash_mismatch=1))
    progress(10, 10, Counter(verified=6, already_stored=2, file_missing=2))
    text = screen.getvalue()
    assert re.search(r"materializing: 3/10 samples, 2 verified, ETA \d+", text)
    assert "10/10 samples, 8 verified, done" in text and text.endswith("\n")


def test_materialize_progress_is_quiet_off_a_terminal() -> None:
    pipe = io.StringIO()
    MaterializeProgress(stream=pipe, interval=0)(1, 1, Counter(verified=1))
    assert pipe.getvalue() == ""
