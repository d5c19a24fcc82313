/* The smoke kernel: every work item reads one word and writes
 * out[i] = in[i] * 3 + i (mod 2^32), the formula of smoke_expected() in
 * src/backend/backend.h, which the host checks for every element. */
__kernel void smoke(__global const uint *in, __global uint *out)
{
	size_t i = get_global_id(0);
	out[i] = in[i] * 3u + (uint)i;
}
