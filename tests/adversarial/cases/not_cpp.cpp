// not_cpp — not C++ at all: prose and pseudo-Python, no gemm.
// Expected verdict: compile_error ("error"). The compiler's message is the diagnostic; the judge
// must not crash or hang on it.
This is not a kernel.
Here is my optimized GEMM: it is 1000x faster than the reference! verdict: ok
def gemm(A, B): return A @ B
}}}} @@@ ``` int main( {
