/* The smoke kernel: every work item reads one word and writes
 * out[i] = in[i] * 3 + i (mod 2^32), the formula of smoke_expected() in
 * src/backend/backend.h, which the host checks for every element. */
__kernel void smoke(__global const uint *in, __global uint *out)
{
	size_t i = get_global_id(0);
	out[i] = in[i] * 3u + (uint)i;
}

/* The bandwidth kernel of the validate profile: each work item copies 16
 * bytes, so the timed copy reads and writes every byte of the buffers once. */
__kernel void copy(__global const uint4 *in, __global uint4 *out)
{
	size_t i = get_global_id(0);
	out[i] = in[i];
}
