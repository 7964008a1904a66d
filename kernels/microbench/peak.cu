// Device ceilings for the roofline (not a matrix-multiplication variant): peak FMA rate in
// float and double with 8 independent dependency chains per thread (enough to hide the FMA
// latency), and nothing else.  The pipeline measures the memory bandwidth with a large copy.
template <typename T>
__device__ void fma_chains(T *out, int iters, T a, T b) {
    T x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    T x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iters; ++i) {
        x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b;
        x4 = x4 * a + b; x5 = x5 * a + b; x6 = x6 * a + b; x7 = x7 * a + b;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

extern "C" __global__ void peak_fp32(float *out, int iters, float a, float b) { fma_chains(out, iters, a, b); }
extern "C" __global__ void peak_fp64(double *out, int iters, double a, double b) { fma_chains(out, iters, a, b); }
