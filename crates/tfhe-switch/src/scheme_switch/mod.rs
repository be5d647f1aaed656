pub mod error; pub mod params; pub mod ring; pub mod sine;
