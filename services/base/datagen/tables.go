package datagen

// Value tables. Weights are relative; they are turned into pickers (lookup
// tables) once per generator.

var civNames = []string{
	"Aztecs", "Berbers", "Britons", "Bulgarians", "Burgundians", "Burmese",
	"Byzantines", "Celts", "Chinese", "Cumans", "Ethiopians", "Franks",
	"Goths", "Huns", "Incas", "Indians", "Italians", "Japanese", "Khmer",
	"Koreans", "Lithuanians", "Magyars", "Malay", "Malians", "Mayans",
	"Mongols", "Persians", "Portuguese", "Saracens", "Sicilians", "Slavs",
	"Spanish", "Tatars", "Teutons", "Turks", "Vietnamese", "Vikings",
}

// civLandWeights is the civ popularity on land maps, in civNames order.
var civLandWeights = []int{
	8, 4, 10, 3, 3, 4, // Aztecs Berbers Britons Bulgarians Burgundians Burmese
	3, 4, 6, 5, 5, 14, // Byzantines Celts Chinese Cumans Ethiopians Franks
	5, 9, 4, 3, 2, 4, 7, // Goths Huns Incas Indians Italians Japanese Khmer
	3, 8, 5, 2, 3, 11, // Koreans Lithuanians Magyars Malay Malians Mayans
	7, 5, 2, 3, 3, 3, // Mongols Persians Portuguese Saracens Sicilians Slavs
	4, 4, 4, 3, 3, 6, // Spanish Tatars Teutons Turks Vietnamese Vikings
}

// civWaterWeights is the civ popularity on water maps (islands,
// team_islands, mediterranean): naval civs dominate. Berbers and Malay are
// deliberately tied.
var civWaterWeights = []int{
	2, 8, 7, 2, 2, 2, // Aztecs Berbers Britons Bulgarians Burgundians Burmese
	5, 3, 4, 2, 2, 4, // Byzantines Celts Chinese Cumans Ethiopians Franks
	2, 2, 2, 3, 12, 9, 2, // Goths Huns Incas Indians Italians Japanese Khmer
	6, 2, 2, 8, 3, 2, // Koreans Lithuanians Magyars Malay Malians Mayans
	2, 6, 10, 5, 3, 2, // Mongols Persians Portuguese Saracens Sicilians Slavs
	4, 2, 3, 4, 3, 14, // Spanish Tatars Teutons Turks Vietnamese Vikings
}

type ladderInfo struct {
	name string
	solo bool // 1v1 ladder: two players
}

var ladders = []ladderInfo{
	{"RM_1v1", true}, {"RM_TEAM", false}, {"DM_1v1", true},
	{"DM_TEAM", false}, {"EW_1v1", true}, {"EW_TEAM", false},
}

var ladderWeights = []int{48, 36, 3, 5, 3, 5}

var soloLadderWeights = []int{85, 0, 8, 0, 7, 0} // for matches that must be 1v1

var mapNames = []string{
	"arabia", "arena", "black_forest", "nomad", "gold_rush", "four_lakes",
	"islands", "team_islands", "runestones", "hideout", "acropolis",
	"golden_pit", "mediterranean", "fortress", "serengeti", "megarandom",
	"steppe",
}

var waterMap = []bool{
	false, false, false, false, false, false,
	true, true, false, false, false,
	false, true, false, false, false,
	false,
}

var soloMapWeights = []int{30, 16, 3, 5, 5, 3, 2, 1, 5, 4, 5, 4, 3, 3, 4, 4, 3}
var teamMapWeights = []int{25, 14, 8, 6, 5, 5, 12, 6, 4, 3, 2, 3, 2, 4, 2, 4, 1}

var serverNames = []string{
	"ukwest", "westeurope", "eastus", "southeastasia", "koreacentral",
	"australiasoutheast", "brazilsouth", "westus2", "westindia",
}

var serverWeights = []int{22, 24, 12, 8, 7, 5, 5, 10, 7}

// proServers are the servers named by Q1.
var proServers = []int{2, 3, 4} // eastus, southeastasia, koreacentral

var patches = []int{35584, 36202, 36906, 37650, 37906, 39284, 39515, 40220, 40874, 41855}
var patchWeights = []int{3, 4, 6, 8, 12, 12, 14, 15, 14, 12}

var colorNames = []string{"Blue", "Red", "Green", "Yellow", "Cyan", "Purple", "Grey", "Orange"}

// Boolean spellings. The canonical form is True/False; the others are
// accepted by the contract (any letter case, 1/0); invalid ones must be
// read as missing.
var (
	altTrue      = []string{"TRUE", "true", "1", "tRUE"}
	altFalse     = []string{"FALSE", "false", "0", "fAlse"}
	invalidBools = []string{"yes", "no", "Y", "N", "T", "F", "2", "-1", "None"}
)

// Extra (ignored) columns written with ShuffleColumns.
const (
	extraMatchColumn  = "lobby_id"
	extraPlayerColumn = "name"
)

var playerNames = []string{
	"Gerbil", "Pikeman42", "Sir \"Trebuchet\" Lot", "Castle, Drop", "wololo",
	"MangonelMike", "xX_Huskarl_Xx", "Scout Rush", "Feitoria", "Boar, Lured",
	"Kipchak", "Elephant Archer", "Monk \"Wololo\" Bob", "TheTownCenter",
}

// picker draws an index with probability proportional to its weight,
// through a 4096-entry lookup table.
type picker struct{ tab [4096]uint8 }

func newPicker(weights []int) *picker {
	total := 0
	for _, w := range weights {
		total += w
	}
	p := &picker{}
	// Largest-remainder apportionment of the table slots.
	n := len(p.tab)
	counts := make([]int, len(weights))
	rem := make([]int, len(weights))
	used := 0
	for i, w := range weights {
		counts[i] = w * n / total
		rem[i] = w * n % total
		used += counts[i]
	}
	for used < n {
		best := -1
		for i := range rem {
			if weights[i] > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		counts[best]++
		rem[best] = -1
		used++
	}
	k := 0
	for i, c := range counts {
		for ; c > 0; c-- {
			p.tab[k] = uint8(i)
			k++
		}
	}
	return p
}

func (p *picker) pick(u uint64) int { return int(p.tab[u&4095]) }
