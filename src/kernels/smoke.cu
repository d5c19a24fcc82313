/* The smoke kernel, CUDA C twin of src/kernels/smoke.cl: out[i] = in[i] * 3 + i
 * (mod 2^32). The host checks every element against smoke_expected() in
 * src/backend/backend.h. Built to PTX by the Makefile when nvcc exists; the
 * checked-in src/kernels/smoke.ptx is what the binary embeds. extern "C"
 * keeps the entry name plain ("smoke") for cuModuleGetFunction. */
extern "C" __global__ void smoke(unsigned *out, const unsigned *in, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * 3u + i;
}

/* The bandwidth kernel of the validate profile, twin of `copy` in
 * src/kernels/smoke.cl: each thread copies 16 bytes, so the timed copy reads
 * and writes every byte of the buffers once. n counts uint4 elements. */
extern "C" __global__ void copy(uint4 *out, const uint4 *in, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}
