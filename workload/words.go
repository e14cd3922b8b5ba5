package workload

import "math/rand/v2"

// fillerWords are common English words that are one token each, with their
// leading space, in every major byte-level BPE vocabulary: o200k_base,
// cl100k_base (and so Llama 3, whose vocabulary extends it), Qwen and
// DeepSeek. A prompt built from them for one tokenizer therefore lands
// within a token or two of its target under the others. TestFillerWords
// checks each one under o200k_base, cl100k_base and the Qwen3
// tokenizer.json.
//
// Never reorder or edit this list: the words a seed picks depend on their
// positions, and a workload must rebuild byte-identically from its seed.
// Append new words at the end if ever needed (and expect new files to
// differ).
var fillerWords = [...]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
	"not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "they",
	"you", "were", "her", "she", "there", "one", "all", "we", "their", "been", "has", "when", "who",
	"will", "more", "no", "if", "out", "so", "said", "what", "up", "its", "about", "than", "into",
	"them", "can", "only", "other", "new", "some", "time", "could", "these", "two", "may", "then",
	"do", "first", "any", "my", "now", "such", "like", "our", "over", "man", "me", "even", "most",
	"made", "after", "also", "did", "many", "before", "must", "through", "back", "years", "where",
	"much", "your", "way", "well", "down", "should", "because", "each", "just", "those", "people",
	"how", "too", "little", "state", "good", "very", "make", "world", "still", "own", "see", "men",
	"work", "long", "get", "here", "between", "both", "life", "being", "under", "never", "day",
	"same", "another", "know", "while", "last", "might", "us", "great", "old", "year", "off", "come",
	"since", "against", "go", "came", "right", "used", "take", "three", "house", "water", "city",
	"place", "point", "hand", "home", "night", "room", "side", "school", "story", "family", "group",
	"country", "number", "part", "problem", "word", "company", "question", "system", "program",
	"government", "fact", "money", "book", "study", "month", "lot", "business", "issue", "area",
	"student", "week", "case", "eye", "job", "series", "member", "end", "kind", "head", "power",
	"hour", "game", "line", "law", "car", "face", "friend", "father", "mother", "child", "level",
	"office", "door", "health", "person", "art", "history", "party", "result", "change", "morning",
	"reason", "research", "girl", "moment", "air", "teacher", "force", "education", "foot", "boy",
	"age", "policy", "music", "market", "sense", "nation", "plan", "college", "interest",
	"experience", "effect", "class", "control", "care", "field", "development", "role", "effort",
	"rate", "heart", "show", "leader", "light", "voice", "wife", "mind", "price", "report",
	"decision", "son", "view", "relationship", "town", "road", "arm", "difference", "value",
	"building", "action", "model", "season", "society", "director", "position", "player", "record",
	"paper", "space", "ground", "form", "event", "official", "matter", "center", "couple", "site",
	"project", "activity", "star", "table", "need", "court", "situation", "cost", "industry",
	"figure", "street", "image", "phone", "data", "picture", "practice", "piece", "land", "product",
	"doctor", "wall", "patient", "worker", "news", "test", "movie", "north", "love", "support",
	"technology", "step", "baby", "computer", "type", "attention", "film", "tree", "source",
	"organization", "hair", "window", "evidence", "population", "truth", "song", "river", "garden",
	"dinner", "bread", "stone", "glass", "forest", "mountain", "island", "summer", "winter", "spring",
	"autumn", "bridge", "letter", "kitchen", "ocean", "flower", "horse", "bird", "fish", "dog", "cat",
	"animal", "plant", "seed", "fruit", "apple", "milk", "coffee", "tea", "sugar", "salt", "rain",
	"snow", "wind", "sun", "moon", "sky", "cloud", "fire", "earth", "metal", "wood", "gold", "silver",
	"iron", "cotton", "wool", "ship", "train", "plane", "boat", "wheel", "engine", "machine", "tool",
	"box", "bag", "cup", "plate", "chair", "bed", "lamp", "clock", "map", "path", "gate", "roof",
	"floor", "corner", "edge", "surface", "shape", "color", "sound", "smell", "taste", "touch",
	"open", "close", "walk", "run", "sit", "stand", "read", "write", "speak", "listen", "watch",
	"wait", "carry", "bring", "send", "buy", "sell", "pay", "build", "grow", "learn", "teach", "play",
	"sing", "dance", "cook", "clean", "wash", "fill", "pull", "push", "turn", "hold", "keep", "leave",
	"begin", "start", "stop", "finish", "follow", "lead", "meet", "join", "help", "move", "live",
	"hope", "feel", "think", "believe", "remember", "forget", "answer", "ask", "tell", "call",
	"visit", "travel", "return", "arrive", "enter", "rise", "fall", "drive", "ride", "fly", "swim",
	"climb", "draw", "paint", "small", "large", "big", "short", "high", "low", "early", "late",
	"young", "quick", "slow", "warm", "cold", "hot", "cool", "dark", "bright", "quiet", "loud",
	"soft", "hard", "heavy", "strong", "weak", "rich", "poor", "simple", "easy", "happy", "sad",
	"calm", "gentle", "careful", "clear", "deep", "wide", "narrow", "fresh", "full", "empty", "green",
	"blue", "red", "white", "black", "brown", "yellow", "golden", "wooden", "round", "flat", "sharp",
	"smooth", "rough", "sweet", "bitter", "fair", "fine", "free", "safe", "true", "real", "whole",
	"common", "public", "private", "local", "national", "natural", "human", "social", "general",
	"special", "certain", "recent", "major", "final", "basic", "central", "single", "similar",
	"various", "slowly", "quickly", "often", "always", "sometimes", "again", "together", "almost",
	"already", "perhaps", "really", "nearly", "later", "soon", "today", "tonight", "tomorrow",
	"yesterday", "across", "along", "around", "behind", "beside", "beyond", "during", "toward",
	"within", "without", "above", "below", "inside", "outside",
}

// SaltWords returns n distinct one-token words drawn from seed. The replay
// fills every request's salt slot with one such set per run, so requests of
// one run still share their prefixes while a second run on the same server
// cannot reuse the first run's prefix cache.
func SaltWords(seed int64, n int) []string {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), streamSalt))
	out := make([]string, 0, n)
	// A partial Fisher–Yates shuffle gives distinct words while there are
	// enough; past that, words repeat, which still keeps one token each.
	idx := make([]int, len(fillerWords))
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < n; i++ {
		k := i % len(idx)
		j := k + rng.IntN(len(idx)-k)
		idx[k], idx[j] = idx[j], idx[k]
		out = append(out, fillerWords[idx[k]])
	}
	return out
}

// Stream identifiers for the PCG generators, so that the salt, the shared
// prefix, each request's own text and the arrival process draw from
// independent sequences of the same seed.
const (
	streamSalt    uint64 = 0x53414c54       // "SALT"
	streamShared  uint64 = 0x53484152       // "SHAR"
	streamPerm    uint64 = 0x5045524d       // "PERM"
	streamArrival uint64 = 0x41525256       // "ARRV"
	streamSystem  uint64 = 0x53595354       // "SYST"
	streamSession uint64 = 0x53455353 << 24 // "SESS", + phase index
	streamBlock   uint64 = 1 << 62          // | hash id, for trace blocks
	streamRequest uint64 = 1 << 63          // | request index
)
