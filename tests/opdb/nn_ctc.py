"""The CTC loss: ``ctc_loss`` through ``log_softmax`` (torch's gradient w.r.t. log_probs is
``exp(log_probs) - posterior / p``, the true one only for normalised log-probabilities, so
gradcheck differentiates the composition). Targets and lengths are constants.

torch has neither forward mode (``_ctc_loss``) nor double backward
(``_ctc_loss_backward``) for it; ember raises the same errors.
"""

from . import Op, S

TARGETS = [[1, 2, 2], [2, 1, 0], [2, 2, 2]]  # repeats; the second is length 2 (0 pads)
INPUT_LENGTHS = [6, 4, 6]
TARGET_LENGTHS = [3, 2, 3]


def _ctc(m, x, reduction="mean", **kw):
    F = m._aten.nn_ctc if m.__name__ == "ember" else m.nn.functional
    lp = x.log_softmax(-1)
    return F.ctc_loss(
        lp,
        m.tensor(TARGETS),
        m.tensor(INPUT_LENGTHS),
        m.tensor(TARGET_LENGTHS),
        reduction=reduction,
        **kw,
    )


OPS = [
    Op("ctc_loss", lambda m, x: _ctc(m, x), (S(6, 3, 4),), forward=False, double=False),
    Op(
        "ctc_loss_none", lambda m, x: _ctc(m, x, "none"), (S(6, 3, 4),), forward=False, double=False
    ),
    Op(
        "ctc_loss_sum_blank_last",
        lambda m, x: _ctc(m, x, "sum", blank=3, zero_infinity=True),
        (S(6, 3, 4),),
        forward=False,  # torch: no forward AD for _ctc_loss
        double=False,  # torch: no derivative for _ctc_loss_backward
    ),
]
