package shards

import "fmt"

// Cover checks the shards that ran, each named by names[i] with its index
// index[i] (from 1; 0 for a run that was not split) of count: twice says
// which shard was given twice ("" if none), missing lists the shards not
// given ("K/N").
func Cover(index []int, count int, names []string) (twice string, missing []string) {
	count = max(count, 1)
	seen := map[int]string{}
	for i, k := range index {
		k = max(k, 1)
		if other, dup := seen[k]; dup {
			return fmt.Sprintf("shard %d/%d given twice (%s and %s)", k, count, other, names[i]), nil
		}
		seen[k] = names[i]
	}
	for k := 1; k <= count; k++ {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, count))
		}
	}
	return "", missing
}
