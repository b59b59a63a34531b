// Package manage is what a person may change in Vigil, with its rules, in
// one place for both front doors: the management API (package api) and the
// dashboard (package web). The handlers of each parse a request and render
// the answer; creating, changing, pausing and resuming a monitor, and
// creating and changing a channel, go through a [Service].
//
// The rules of a person against a source (a program that declares its
// monitors) live here too: the settings a person changes become person
// fields, which a source's next declaration leaves alone; a pause by a
// person is the person field "paused", so a declaration does not resume
// it; and the slug of a monitor a source declares is the source's.
package manage
