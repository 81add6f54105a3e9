"""torch.fft: the three transform ops (C2C, R2C, C2R) reached through the public functions,
over dims, sizes and norms. Complex results are seen through ``view_as_real``; complex
inputs are built with ``complex`` inside ``fn``."""

from . import Op, S


def _r(m, t):
    return m.view_as_real(t) if t.is_complex() else t


def _z(m, x, y):
    return m.complex(x, y)


OPS = [
    Op("fft_fft", lambda m, x, y: _r(m, m.fft.fft(_z(m, x, y))), (S(3, 5), S(3, 5))),
    Op("fft_fft_real", lambda m, x: _r(m, m.fft.fft(x, n=7, norm="ortho")), (S(3, 5),)),
    Op("fft_ifft", lambda m, x, y: _r(m, m.fft.ifft(_z(m, x, y), dim=0)), (S(4, 3), S(4, 3))),
    Op("fft_rfft", lambda m, x: _r(m, m.fft.rfft(x, norm="forward")), (S(3, 6),)),
    Op("fft_rfft_odd", lambda m, x: _r(m, m.fft.rfft(x, n=5, dim=0)), (S(6, 2),)),
    Op("fft_irfft", lambda m, x, y: m.fft.irfft(_z(m, x, y)), (S(2, 4), S(2, 4))),
    Op("fft_irfft_n", lambda m, x, y: m.fft.irfft(_z(m, x, y), n=7, norm="ortho"), (S(4), S(4))),
    Op("fft_hfft", lambda m, x, y: m.fft.hfft(_z(m, x, y), n=6), (S(2, 4), S(2, 4))),
    # (ihfft ends with torch's lazy conj, which view_as_real refuses: "* 1" materializes it)
    Op("fft_ihfft", lambda m, x: _r(m, m.fft.ihfft(x) * 1), (S(2, 5),)),
    Op("fft_fft2", lambda m, x, y: _r(m, m.fft.fft2(_z(m, x, y), s=(3, 5))), (S(4, 4), S(4, 4))),
    Op("fft_ifftn_real", lambda m, x: _r(m, m.fft.ifftn(x, norm="ortho")), (S(2, 3, 2),)),
    Op("fft_rfftn", lambda m, x: _r(m, m.fft.rfftn(x, dim=(0, 2))), (S(3, 2, 4),)),
    Op("fft_irfft2", lambda m, x, y: m.fft.irfft2(_z(m, x, y), s=(3, 6)), (S(3, 4), S(3, 4))),
    Op("fft_fftshift", lambda m, x: m.fft.fftshift(x), (S(3, 4),)),
]
