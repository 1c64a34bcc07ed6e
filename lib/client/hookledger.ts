// `hookledger/client`, this repository's package export: the @hookledger/client
// package (client/), re-exported from its sources so that code in this
// repository run through tsx or a TypeScript bundler needs no build first. A
// service outside the repository installs the package itself (client/README.md).
export * from "../../client/src/index";
