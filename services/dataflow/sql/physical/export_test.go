package physical

// Prune is prune, for the external tests.
var Prune = prune
