#include <cmath>

// Softmax of each row of a rows x cols matrix, row-major: y[r][c] = exp(x[r][c] - m) / s, where
// m is the row's largest value (subtracted so that exp cannot overflow) and s is the sum of the
// row's exponentials. Every row of y sums to 1.
void softmax_rows(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int c = 1; c < cols; ++c) m = fmaxf(m, xr[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
      yr[c] = expf(xr[c] - m);
      s += yr[c];
    }
    for (int c = 0; c < cols; ++c) yr[c] /= s;
  }
}
