module github.com/edgemail/edgemail/clients/go

go 1.19
