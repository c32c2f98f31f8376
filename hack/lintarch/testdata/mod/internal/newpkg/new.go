// Package newpkg has no rule.
package newpkg
