// Export (filled in below).
(function () { "use strict"; window.memvizExport = {}; })();
