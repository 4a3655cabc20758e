// The compiled module (binding.gyp); requiring this throws when the build did not happen.
module.exports = require('./build/Release/dsp.node');
