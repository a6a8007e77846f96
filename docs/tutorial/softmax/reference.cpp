// reference.cpp: `kforge new` wrote it from softmax_rows.cpp (function softmax_rows). A task's
// reference is a template over the element type T: the judge compiles softmax_rows<float> as the
// speed baseline and softmax_rows<double> as the oracle that judges every candidate, so the body
// computes in T.
// - element type -> T: 4 places
// - f-suffixed literals typed (T(0.5f)): 1 place
// - float math functions -> std:: overloads: 2 places
// - sizes of other types than int64_t (and scalars of another type) are received as the ABI
//   passes them and copied into locals of their own type
#include <kforge/kernel.h>

#include <cmath>

// Softmax of each row of a rows x cols matrix, row-major: y[r][c] = exp(x[r][c] - m) / s, where
// m is the row's largest value (subtracted so that exp cannot overflow) and s is the sum of the
// row's exponentials. Every row of y sums to 1.
template <typename T>
void softmax_rows(const T* x, T* y, int64_t rows_arg, int64_t cols_arg) {
  int rows(rows_arg);  // kforge new: the kernel ABI passes sizes as int64_t
  int cols(cols_arg);  // kforge new: the kernel ABI passes sizes as int64_t
  for (int r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T m = xr[0];
    for (int c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    T s = T(0.0f);
    for (int c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - m);
      s += yr[c];
    }
    for (int c = 0; c < cols; ++c) yr[c] /= s;
  }
}
