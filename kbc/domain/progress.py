"""Who hears how long work goes on: the shapes of the callbacks each pass reports progress to.

Every pass reports, none prints: an interface (the CLI's terminal lines, a server's log)
passes a callback of the pass's shape, or None to hear nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from kbc.domain.models import AnalysisResult

FileDone = Callable[[AnalysisResult], None]  # one file analyzed (or failed)
AnalyzeProgress = Callable[[int], FileDone]  # given the number of files, what hears each one
ViewsProgress = Callable[[int], Callable[[], None]]  # given the number of views, a tick per view
EmbedProgress = Callable[[str, int, int], None]  # (stage, done, total) of the units embedded
Say = Callable[[str], None]  # one line: a commit asked in `kbc eval --history`, a notice
