pub mod append;
pub mod demo;
pub mod hook;
pub mod install;
pub mod log;
pub mod verify;
