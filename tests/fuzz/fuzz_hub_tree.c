/* A page of the hub's tree listing (hub_parse_tree_page), then the listing
 * hf fetch would write from it (hf_tree_listing_json) when every file was
 * verified with the hash the listing names: the output must be JSON that
 * names exactly those files, whatever the server sent. */
#include <jansson.h>

#include "fuzz.h"
#include "provision/hf_tree.h"
#include "provision/hub_answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fuzz_exact(data, size);
	struct hub_tree tree = { 0 };
	char err[600];
	if (hub_parse_tree_page(body, size, &tree, err, sizeof(err)) == 0) {
		struct hf_tree_verified *v = calloc(tree.n + 1, sizeof(*v));
		if (!v)
			abort();
		for (size_t i = 0; i < tree.n; i++) {
			const struct hub_tree_file *t = &tree.files[i];
			v[i] = (struct hf_tree_verified){ t->path, t->lfs_sha256 ? t->lfs_sha256 : t->blob_id,
							  t->size };
		}
		char *json = hf_tree_listing_json(&tree, v, tree.n, err, sizeof(err));
		if (json) {
			json_t *back = json_loads(json, 0, NULL);
			json_t *files = json_object_get(back, "files");
			if (!json_is_object(files) || json_object_size(files) != tree.n)
				abort();
			json_decref(back);
			free(json);
		} else if (!err[0]) {
			abort();
		}
		free(v);
	} else if (!err[0] || tree.n) {
		abort();
	}
	hub_tree_free(&tree);
	free(body);
	return 0;
}
