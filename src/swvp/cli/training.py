"""What ``swvp train tagger`` and ``swvp train parser`` share: the progress bar, checkpoints, Ctrl-C, ``--resume`` and
the summary of what was saved.

Ctrl-C during training (:mod:`swvp._interrupt`) stops at the next safe point — a chunk boundary inside an epoch,
or the end of an epoch whose dev scoring or checkpoint was being written — then the model is saved with what was
completed and its training state (so ``--resume MODEL`` continues the run), the command says so and exits 130. A
second Ctrl-C stops at once.
"""

from __future__ import annotations

import sys

from swvp import _interrupt
from swvp.exceptions import SwvpError

EXIT_INTERRUPTED = 130


class EpochBar:
    """A progress bar per epoch (its total is the epoch's sentences) with the training accuracy so far and the best
    dev score yet (the weights a checkpoint saves). The first chunk of every epoch is left out of the rate (in the
    first epoch it includes compiling the kernels), so the ETA is the epoch's own."""

    def __init__(self, epochs: int, enabled: bool):
        self.epochs = epochs
        self.enabled = enabled
        self.bar = None  # drawn when the first chunk is done (not before an error in the data)
        self.epoch = None
        self.best: tuple[float, int] | None = None

    def progress(self, epoch: int, done: int, total: int, stats) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="sent", dynamic_ncols=True, mininterval=0.5, smoothing=0)
        bar = self.bar
        if epoch != self.epoch:  # a new epoch: a new count, timed from the end of its first chunk
            self.epoch = epoch
            bar.initial = 0
            bar.reset(total=total)
            bar.set_description(f"epoch {epoch}/{self.epochs}", refresh=False)
            bar.initial = bar.n = bar.last_print_n = done
        from swvp.learn._codes import STAT_TOKENS, STAT_TOKENS_WRONG

        if stats[STAT_TOKENS]:
            text = f"train {100 * (1 - stats[STAT_TOKENS_WRONG] / stats[STAT_TOKENS]):.2f}%"
            if self.best is not None:
                text += f" best dev {100 * self.best[0]:.2f}% (epoch {self.best[1]})"
            bar.set_postfix_str(text, refresh=False)
        bar.update(done - bar.n)

    def epoch_end(self, es) -> None:
        if es.dev_accuracy is not None and (self.best is None or es.dev_accuracy > self.best[0]):
            self.best = (es.dev_accuracy, es.epoch)

    def write(self, msg: str) -> None:
        if self.bar is not None:
            self.bar.write(msg)
        else:
            print(msg)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _notice() -> None:
    print("\nswvp: Ctrl-C: stopping at the next safe point to save what was completed (Ctrl-C again: stop at once)",
          file=sys.stderr, flush=True)


COMPLETED, INTERRUPTED, NOTHING = "completed", "interrupted", "nothing"


def fit_and_save(estimator, args, fit_args: tuple, fit_kwargs: dict, *, epoch_line) -> str:
    """Fit with Ctrl-C deferred, write checkpoints (``--checkpoint``) and the model. Returns COMPLETED, INTERRUPTED
    (saved with what was completed) or NOTHING (Ctrl-C before any example was learned from: nothing saved).
    ``epoch_line(es)``: the line printed after an epoch (None: nothing)."""
    epochs = estimator._learner().epochs
    bar = EpochBar(epochs, not args.quiet)
    last = {}

    def on_epoch(es, result):
        if args.checkpoint:  # only then read after fit: holding it longer keeps w and u alive through save
            last["result"] = result
        bar.epoch_end(es)
        line = epoch_line(es)
        if line:
            bar.write(line)
        if args.checkpoint:
            estimator._finish(result)
            estimator.save(args.model, training=result)

    with _interrupt.deferred(notice=_notice):
        try:
            estimator.fit(*fit_args, on_epoch=on_epoch, on_progress=bar.progress,  # 50 chunks an epoch, bar or not
                          resume=getattr(args, "resume", None), **fit_kwargs)
        finally:
            bar.close()
        interrupted = estimator.interrupted_ or _interrupt.requested()
        training = getattr(estimator, "_training", None)
        if interrupted and not estimator.history_ and (training is None or training.partial is None):
            return NOTHING
        if interrupted or not args.checkpoint:
            estimator.save(args.model)  # after Ctrl-C, with the training state (resumable)
        else:
            estimator.save(args.model, training=last.get("result"))
        return INTERRUPTED if interrupted else COMPLETED


def report_interrupted(estimator, args, saved: bool, also: str = "") -> int:
    """The lines that say what Ctrl-C left, and the exit status 130 (``also``: options to add to the command to
    continue it)."""
    if not saved:
        print("swvp: interrupted before the first examples were learned from: nothing saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    training = getattr(estimator, "_training", None)
    partial = "" if training is None or training.partial is None else (
        f" and {training.partial.done} of {training.partial.order.shape[0]} sentences of epoch "
        f"{training.partial.epoch}")
    done = len(estimator.history_)
    more = f" (to continue: the same command with {also}--resume {args.model})" if training is not None else ""
    print(f"swvp: interrupted: {args.model} holds what was completed: {done} epoch{'s' if done != 1 else ''}"
          f"{partial}{more}", file=sys.stderr)
    return EXIT_INTERRUPTED


def summary(estimator, what: str, metric: str) -> str:
    """``<what>, <epochs run>, best epoch k, dev <metric> <score> (the saved weights)``."""
    learner = estimator._learner()
    run = len(estimator.history_)
    text = f"{what}, {run} of {learner.epochs} epochs"
    if getattr(estimator, "interrupted_", False):
        text += " (interrupted)"
    elif run < learner.epochs and estimator.history_ and estimator.history_[-1]["mistakes"] == 0:
        text += " (stopped: no training mistakes)"
    if estimator.best_epoch_ is not None:
        text += f", best epoch {estimator.best_epoch_}"
    score = getattr(estimator, "dev_score_", None)
    if score is not None:
        text += f", dev {metric} {100 * score:.2f}% (the saved weights)"
    return text


#: options that do not shape the model: data, outputs, reporting, how the work is spread, and what a resumed run
#: may change
NOT_SETTINGS = frozenset(("train", "dev", "test", "model", "plot", "checkpoint", "quiet", "verbose", "resume", "jobs",
                          "dask_scheduler", "epochs", "allow_unknown_labels", "func", "command", "what", "given"))


def settings(args) -> dict:
    """The options that shaped the model, as recorded in its file (``command_line_``) for ``--resume``."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(vars(args).items()) if k not in NOT_SETTINGS}


def apply_resume(args, estimator_class, option) -> None:
    """``--resume CHECKPOINT``: the checkpoint's own settings for the options not given; an option given with
    another value is refused (exit 2). ``option(dest)`` spells an option."""
    ckpt = estimator_class.load(args.resume)
    if getattr(ckpt, "_checkpoint", None) is None:
        raise SwvpError(f"--resume {args.resume}: the file holds no training state (it was saved by a run that "
                        f"completed without --checkpoint)")
    stored = getattr(ckpt, "command_line_", None)
    if not stored:
        raise SwvpError(f"--resume {args.resume}: the file does not record the options of its training command")
    apply_settings(args, stored, option)
    if "epochs" not in args.given:
        args.epochs = ckpt._learner().epochs


def apply_settings(args, stored: dict, option) -> None:
    """The recorded options (:func:`settings`) of the run that ``--resume`` continues, for the options not given; one
    given with another value is refused (exit 2). ``option(dest)`` spells an option."""
    current = settings(args)
    for dest, value in stored.items():
        if dest not in current:
            continue
        if dest in args.given and current[dest] != value:
            raise SwvpError(f"--resume: {option(dest)} {_spell(current[dest])} differs from the checkpoint's "
                            f"{option(dest)} {_spell(value)} (a resumed run keeps its settings)")
        setattr(args, dest, tuple(value) if isinstance(value, list) else value)


def _spell(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
