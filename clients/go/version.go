package edgemail

// Version is this client's version, named in the User-Agent (edgemail-go/<Version>).
const Version = "0.1.0"
