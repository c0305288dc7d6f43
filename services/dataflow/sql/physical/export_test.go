package physical

// Optimize is optimize, for the external tests.
var Optimize = optimize
