// plugin.cc: the ops_fft op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_fft", "0.1.0",
            "Paddle's spectral ops on Eigen's FFT: fft_c2c, fft_r2c, fft_c2r, frame, overlap_add");
